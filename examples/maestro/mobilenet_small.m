Network mobilenetv2_public {
Layer mb_conv1_s2_rs {
Type: CONV
Stride { X: 2, Y: 2 }
Dimensions { K: 32, C: 3, R: 3, S: 3, Y: 225, X: 225 }
Dataflow {
  SpatialMap(1,1) Y';
  TemporalMap(1,1) X';
  TemporalMap(1,1) C;
  TemporalMap(16,16) K;
  TemporalMap(Sz(R),Sz(R)) R;
  TemporalMap(Sz(S),Sz(S)) S;
  Cluster(Sz(R),P);
  SpatialMap(1,1) Y;
  SpatialMap(1,1) R;
  TemporalMap(Sz(S),Sz(S)) S;
}
}
Layer mb_b3_dw_cp {
Type: DSCONV
Stride { X: 1, Y: 1 }
Dimensions { K: 1, C: 144, R: 3, S: 3, Y: 58, X: 58 }
Dataflow {
  SpatialMap(1,1) C;
  TemporalMap(Sz(R),1) Y;
  TemporalMap(Sz(S),1) X;
  TemporalMap(Sz(R),Sz(R)) R;
  TemporalMap(Sz(S),Sz(S)) S;
}
}
Layer mb_b4_dw_yxp {
Type: DSCONV
Stride { X: 1, Y: 1 }
Dimensions { K: 1, C: 384, R: 3, S: 3, Y: 16, X: 16 }
Dataflow {
  TemporalMap(1,1) C;
  SpatialMap(Sz(R),1) Y;
  TemporalMap(10,8) X;
  TemporalMap(Sz(R),Sz(R)) R;
  TemporalMap(Sz(S),Sz(S)) S;
  Cluster(8, P);
  SpatialMap(Sz(S),1) X;
}
}
}
