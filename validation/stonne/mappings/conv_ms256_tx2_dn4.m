// STONNE case conv_ms256_tx2_dn4: ./stonne -CONV -layer_name=conv_ms256_tx2_dn4 -R=3 -S=3 -C=8 -K=8 -G=1 -N=1 -X=12 -Y=12 -strides=1 -T_R=3 -T_S=3 -T_C=4 -T_K=2 -T_G=1 -T_N=1 -T_X_=2 -T_Y_=1 -num_ms=256 -dn_bw=4 -rn_bw=4 -accumulation_buffer=1 -print_stats=1
Network stonne_conv_ms256_tx2_dn4 {
Layer conv_ms256_tx2_dn4 {
Type: CONV
Stride { X: 1, Y: 1 }
Dimensions { K: 8, C: 8, R: 3, S: 3, Y: 12, X: 12 }
Dataflow {
  TemporalMap(2,2) K;
  TemporalMap(4,2) Y;
  TemporalMap(3,1) X;
  Cluster(256, P);
  SpatialMap(1,1) K;
  Cluster(72, P);
  SpatialMap(3,1) Y;
  Cluster(36, P);
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
