// STONNE case conv_tx2_ty2: ./stonne -CONV -layer_name=conv_tx2_ty2 -R=3 -S=3 -C=2 -K=2 -G=1 -N=1 -X=10 -Y=10 -strides=1 -T_R=3 -T_S=3 -T_C=2 -T_K=1 -T_G=1 -T_N=1 -T_X_=2 -T_Y_=2 -num_ms=128 -dn_bw=32 -rn_bw=16 -accumulation_buffer=1 -print_stats=1
Network stonne_conv_tx2_ty2 {
Layer conv_tx2_ty2 {
Type: CONV
Stride { X: 1, Y: 1 }
Dimensions { K: 2, C: 2, R: 3, S: 3, Y: 10, X: 10 }
Dataflow {
  TemporalMap(1,1) K;
  TemporalMap(4,2) Y;
  TemporalMap(4,2) X;
  Cluster(128, P);
  SpatialMap(3,1) Y;
  Cluster(36, P);
  SpatialMap(3,1) X;
  Cluster(18, P);
  SpatialMap(1,1) C;
  Cluster(9, P);
  SpatialMap(1,1) Y;
  SpatialMap(1,1) R;
  Cluster(3, P);
  SpatialMap(1,1) X;
  SpatialMap(1,1) S;
}
}
}
