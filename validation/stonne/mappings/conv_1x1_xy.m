// STONNE case conv_1x1_xy: ./stonne -CONV -layer_name=conv_1x1_xy -R=1 -S=1 -C=32 -K=16 -G=1 -N=1 -X=8 -Y=8 -strides=1 -T_R=1 -T_S=1 -T_C=8 -T_K=4 -T_G=1 -T_N=1 -T_X_=2 -T_Y_=2 -num_ms=128 -dn_bw=32 -rn_bw=16 -accumulation_buffer=1 -print_stats=1
Network stonne_conv_1x1_xy {
Layer conv_1x1_xy {
Type: CONV
Stride { X: 1, Y: 1 }
Dimensions { K: 16, C: 32, R: 1, S: 1, Y: 8, X: 8 }
Dataflow {
  TemporalMap(4,4) K;
  TemporalMap(2,2) Y;
  TemporalMap(2,2) X;
  Cluster(128, P);
  SpatialMap(1,1) K;
  Cluster(32, P);
  SpatialMap(1,1) Y;
  Cluster(16, P);
  SpatialMap(1,1) X;
  Cluster(8, P);
  SpatialMap(4,4) C;
}
}
}
