// STONNE case conv_fc4_k1_dn1: ./stonne -CONV -layer_name=conv_fc4_k1_dn1 -R=3 -S=3 -C=16 -K=8 -G=1 -N=1 -X=12 -Y=12 -strides=1 -T_R=3 -T_S=3 -T_C=4 -T_K=1 -T_G=1 -T_N=1 -T_X_=1 -T_Y_=1 -num_ms=64 -dn_bw=1 -rn_bw=1 -accumulation_buffer=1 -print_stats=1
Network stonne_conv_fc4_k1_dn1 {
Layer conv_fc4_k1_dn1 {
Type: CONV
Stride { X: 1, Y: 1 }
Dimensions { K: 8, C: 16, R: 3, S: 3, Y: 12, X: 12 }
Dataflow {
  TemporalMap(1,1) K;
  TemporalMap(3,1) Y;
  TemporalMap(3,1) X;
  Cluster(64, P);
  SpatialMap(4,4) C;
  Cluster(9, P);
  SpatialMap(1,1) Y;
  SpatialMap(1,1) R;
  Cluster(3, P);
  SpatialMap(1,1) X;
  SpatialMap(1,1) S;
}
}
}
