// STONNE case conv_fs3: ./stonne -CONV -layer_name=conv_fs3 -R=3 -S=3 -C=8 -K=4 -G=1 -N=1 -X=14 -Y=14 -strides=1 -T_R=3 -T_S=1 -T_C=4 -T_K=2 -T_G=1 -T_N=1 -T_X_=2 -T_Y_=1 -num_ms=64 -dn_bw=8 -rn_bw=4 -accumulation_buffer=1 -print_stats=1
Network stonne_conv_fs3 {
Layer conv_fs3 {
Type: CONV
Stride { X: 1, Y: 1 }
Dimensions { K: 4, C: 8, R: 3, S: 3, Y: 14, X: 14 }
Dataflow {
  TemporalMap(2,2) K;
  TemporalMap(4,2) Y;
  TemporalMap(3,1) X;
  Cluster(64, P);
  SpatialMap(1,1) K;
  Cluster(24, P);
  SpatialMap(3,1) Y;
  Cluster(12, P);
  SpatialMap(2,2) C;
  Cluster(3, P);
  SpatialMap(1,1) Y;
  SpatialMap(1,1) R;
}
}
}
