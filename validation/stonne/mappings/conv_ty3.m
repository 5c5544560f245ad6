// STONNE case conv_ty3: ./stonne -CONV -layer_name=conv_ty3 -R=3 -S=3 -C=4 -K=4 -G=1 -N=1 -X=12 -Y=12 -strides=1 -T_R=3 -T_S=3 -T_C=1 -T_K=2 -T_G=1 -T_N=1 -T_X_=1 -T_Y_=3 -num_ms=64 -dn_bw=16 -rn_bw=8 -accumulation_buffer=1 -print_stats=1
Network stonne_conv_ty3 {
Layer conv_ty3 {
Type: CONV
Stride { X: 1, Y: 1 }
Dimensions { K: 4, C: 4, R: 3, S: 3, Y: 12, X: 12 }
Dataflow {
  TemporalMap(2,2) K;
  TemporalMap(3,1) Y;
  TemporalMap(5,3) X;
  Cluster(64, P);
  SpatialMap(1,1) K;
  Cluster(27, P);
  SpatialMap(3,1) X;
  Cluster(9, P);
  SpatialMap(1,1) Y;
  SpatialMap(1,1) R;
  Cluster(3, P);
  SpatialMap(1,1) X;
  SpatialMap(1,1) S;
}
}
}
