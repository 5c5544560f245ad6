// STONNE case conv_s2_c4: ./stonne -CONV -layer_name=conv_s2_c4 -R=3 -S=3 -C=4 -K=4 -G=1 -N=1 -X=15 -Y=15 -strides=2 -T_R=3 -T_S=3 -T_C=4 -T_K=1 -T_G=1 -T_N=1 -T_X_=1 -T_Y_=1 -num_ms=64 -dn_bw=8 -rn_bw=8 -accumulation_buffer=1 -print_stats=1
Network stonne_conv_s2_c4 {
Layer conv_s2_c4 {
Type: CONV
Stride { X: 2, Y: 2 }
Dimensions { K: 4, C: 4, R: 3, S: 3, Y: 15, X: 15 }
Dataflow {
  TemporalMap(1,1) K;
  TemporalMap(3,2) Y;
  TemporalMap(3,2) X;
  Cluster(64, P);
  SpatialMap(1,1) C;
  Cluster(9, P);
  SpatialMap(1,1) Y;
  SpatialMap(1,1) R;
  Cluster(3, P);
  SpatialMap(1,1) X;
  SpatialMap(1,1) S;
}
}
}
