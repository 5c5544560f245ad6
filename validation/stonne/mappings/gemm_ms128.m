// STONNE case gemm_ms128: ./stonne -DenseGEMM -layer_name=gemm_ms128 -M=64 -N=32 -K=32 -T_M=4 -T_N=4 -T_K=8 -num_ms=128 -dn_bw=16 -rn_bw=16 -accumulation_buffer=1 -print_stats=1
Network stonne_gemm_ms128 {
Layer gemm_ms128 {
Type: GEMM
Dimensions { M: 64, N: 32, K: 32 }
Dataflow {
  TemporalMap(4,4) N;
  TemporalMap(4,4) M;
  Cluster(128, P);
  SpatialMap(1,1) N;
  Cluster(32, P);
  SpatialMap(1,1) M;
  Cluster(8, P);
  SpatialMap(4,4) K;
}
}
}
