// STONNE case conv_ms256: ./stonne -CONV -layer_name=conv_ms256 -R=3 -S=3 -C=16 -K=16 -G=1 -N=1 -X=10 -Y=10 -strides=1 -T_R=3 -T_S=3 -T_C=8 -T_K=2 -T_G=1 -T_N=1 -T_X_=1 -T_Y_=1 -num_ms=256 -dn_bw=32 -rn_bw=32 -accumulation_buffer=1 -print_stats=1
Network stonne_conv_ms256 {
Layer conv_ms256 {
Type: CONV
Stride { X: 1, Y: 1 }
Dimensions { K: 16, C: 16, R: 3, S: 3, Y: 10, X: 10 }
Dataflow {
  TemporalMap(2,2) K;
  TemporalMap(3,1) Y;
  TemporalMap(3,1) X;
  Cluster(256, P);
  SpatialMap(1,1) K;
  Cluster(72, P);
  SpatialMap(2,2) C;
  Cluster(9, P);
  SpatialMap(1,1) Y;
  SpatialMap(1,1) R;
  Cluster(3, P);
  SpatialMap(1,1) X;
  SpatialMap(1,1) S;
}
}
}
