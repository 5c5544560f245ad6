// STONNE case conv_5x5: ./stonne -CONV -layer_name=conv_5x5 -R=5 -S=5 -C=3 -K=8 -G=1 -N=1 -X=16 -Y=16 -strides=1 -T_R=5 -T_S=5 -T_C=1 -T_K=2 -T_G=1 -T_N=1 -T_X_=1 -T_Y_=1 -num_ms=64 -dn_bw=8 -rn_bw=8 -accumulation_buffer=1 -print_stats=1
Network stonne_conv_5x5 {
Layer conv_5x5 {
Type: CONV
Stride { X: 1, Y: 1 }
Dimensions { K: 8, C: 3, R: 5, S: 5, Y: 16, X: 16 }
Dataflow {
  TemporalMap(2,2) K;
  TemporalMap(5,1) Y;
  TemporalMap(5,1) X;
  Cluster(64, P);
  SpatialMap(1,1) K;
  Cluster(25, P);
  SpatialMap(1,1) Y;
  SpatialMap(1,1) R;
  Cluster(5, P);
  SpatialMap(1,1) X;
  SpatialMap(1,1) S;
}
}
}
