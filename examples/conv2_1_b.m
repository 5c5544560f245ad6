Network resnet {
  Layer conv2_1_b {
    Type: CONV
    Stride { X: 1, Y: 1 }
    Dimensions { K: 64, C: 64, R: 3, S: 3, Y: 58, X: 58 }
    Dataflow {
      SpatialMap(1,1) K;
      TemporalMap(64,64) C;
      TemporalMap(Sz(R),1) Y;
      TemporalMap(Sz(S),1) X;
      Cluster(64, P);
      SpatialMap(1,1) C;
    }
  }
}
