// STONNE case conv_1x1: ./stonne -CONV -layer_name=conv_1x1 -R=1 -S=1 -C=32 -K=16 -G=1 -N=1 -X=8 -Y=8 -strides=1 -T_R=1 -T_S=1 -T_C=16 -T_K=4 -T_G=1 -T_N=1 -T_X_=1 -T_Y_=1 -num_ms=64 -dn_bw=16 -rn_bw=8 -accumulation_buffer=1 -print_stats=1
Network stonne_conv_1x1 {
Layer conv_1x1 {
Type: CONV
Stride { X: 1, Y: 1 }
Dimensions { K: 16, C: 32, R: 1, S: 1, Y: 8, X: 8 }
Dataflow {
  TemporalMap(4,4) K;
  TemporalMap(1,1) Y;
  TemporalMap(1,1) X;
  Cluster(64, P);
  SpatialMap(1,1) K;
  Cluster(16, P);
  SpatialMap(2,2) C;
}
}
}
