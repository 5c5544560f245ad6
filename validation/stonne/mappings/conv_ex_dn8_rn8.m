// STONNE case conv_ex_dn8_rn8: ./stonne -CONV -layer_name=conv_ex_dn8_rn8 -R=3 -S=3 -C=6 -K=6 -G=1 -N=1 -X=20 -Y=20 -strides=1 -T_R=3 -T_S=3 -T_C=1 -T_K=1 -T_G=1 -T_N=1 -T_X_=3 -T_Y_=1 -num_ms=64 -dn_bw=8 -rn_bw=8 -accumulation_buffer=1 -print_stats=1
Network stonne_conv_ex_dn8_rn8 {
Layer conv_ex_dn8_rn8 {
Type: CONV
Stride { X: 1, Y: 1 }
Dimensions { K: 6, C: 6, R: 3, S: 3, Y: 20, X: 20 }
Dataflow {
  TemporalMap(1,1) K;
  TemporalMap(5,3) Y;
  TemporalMap(3,1) X;
  Cluster(64, P);
  SpatialMap(3,1) Y;
  Cluster(9, P);
  SpatialMap(1,1) Y;
  SpatialMap(1,1) R;
  Cluster(3, P);
  SpatialMap(1,1) X;
  SpatialMap(1,1) S;
}
}
}
