// STONNE case conv_s2_fr3: ./stonne -CONV -layer_name=conv_s2_fr3 -R=3 -S=3 -C=8 -K=8 -G=1 -N=1 -X=11 -Y=11 -strides=2 -T_R=1 -T_S=3 -T_C=8 -T_K=2 -T_G=1 -T_N=1 -T_X_=1 -T_Y_=1 -num_ms=64 -dn_bw=8 -rn_bw=2 -accumulation_buffer=1 -print_stats=1
Network stonne_conv_s2_fr3 {
Layer conv_s2_fr3 {
Type: CONV
Stride { X: 2, Y: 2 }
Dimensions { K: 8, C: 8, R: 3, S: 3, Y: 11, X: 11 }
Dataflow {
  TemporalMap(2,2) K;
  TemporalMap(3,2) Y;
  TemporalMap(3,2) X;
  Cluster(64, P);
  SpatialMap(1,1) K;
  Cluster(24, P);
  SpatialMap(1,1) C;
  Cluster(3, P);
  SpatialMap(1,1) X;
  SpatialMap(1,1) S;
}
}
}
