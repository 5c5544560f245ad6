// Two tiny layers for the golden traces (traces/README.md): run on a 2x2 array with
//   accelsim simulate --hw eyeriss_like --set pe_array.rows=2 --set pe_array.cols=2 \
//     --set l2.size_bytes=256 --set dram.latency_cycles=20 --set dram.burst_bytes=16 \
//     --mapping traces/golden/tiny.m --trace DIR --trace-format perfetto,csv,dram
Network tiny {
  Layer conv {
    Type: CONV
    Stride { X: 1, Y: 1 }
    Dimensions { K: 4, C: 3, R: 3, S: 3, Y: 5, X: 5 }
    Dataflow {
      SpatialMap(1,1) K;
      TemporalMap(2,2) C;
      TemporalMap(3,1) Y;
      TemporalMap(3,1) X;
      Cluster(2, P);
      SpatialMap(1,1) C;
    }
  }
  Layer gemm {
    Type: GEMM
    Dimensions { M: 6, N: 4, K: 8 }
    Dataflow {
      SpatialMap(2,2) N;
      TemporalMap(4,4) K;
      TemporalMap(2,2) M;
      Cluster(2, P);
      SpatialMap(2,2) K;
    }
  }
}
