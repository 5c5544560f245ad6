// STONNE case conv_s_rem: ./stonne -CONV -layer_name=conv_s_rem -R=3 -S=3 -C=6 -K=4 -G=1 -N=1 -X=10 -Y=10 -strides=1 -T_R=3 -T_S=2 -T_C=3 -T_K=2 -T_G=1 -T_N=1 -T_X_=1 -T_Y_=1 -num_ms=64 -dn_bw=8 -rn_bw=8 -accumulation_buffer=1 -print_stats=1
Network stonne_conv_s_rem {
Layer conv_s_rem {
Type: CONV
Stride { X: 1, Y: 1 }
Dimensions { K: 4, C: 6, R: 3, S: 3, Y: 10, X: 10 }
Dataflow {
  TemporalMap(2,2) K;
  TemporalMap(3,1) Y;
  TemporalMap(3,1) X;
  Cluster(64, P);
  SpatialMap(1,1) K;
  Cluster(18, P);
  SpatialMap(2,2) C;
  Cluster(6, P);
  SpatialMap(1,1) Y;
  SpatialMap(1,1) R;
  Cluster(2, P);
  SpatialMap(2,2) X;
  SpatialMap(2,2) S;
}
}
}
