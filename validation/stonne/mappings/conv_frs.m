// STONNE case conv_frs: ./stonne -CONV -layer_name=conv_frs -R=3 -S=3 -C=8 -K=4 -G=1 -N=1 -X=10 -Y=10 -strides=1 -T_R=1 -T_S=1 -T_C=8 -T_K=4 -T_G=1 -T_N=1 -T_X_=2 -T_Y_=1 -num_ms=64 -dn_bw=16 -rn_bw=8 -accumulation_buffer=1 -print_stats=1
Network stonne_conv_frs {
Layer conv_frs {
Type: CONV
Stride { X: 1, Y: 1 }
Dimensions { K: 4, C: 8, R: 3, S: 3, Y: 10, X: 10 }
Dataflow {
  TemporalMap(4,4) K;
  TemporalMap(4,2) Y;
  TemporalMap(3,1) X;
  Cluster(64, P);
  SpatialMap(1,1) K;
  Cluster(16, P);
  SpatialMap(3,1) Y;
  Cluster(8, P);
  SpatialMap(1,1) C;
}
}
}
