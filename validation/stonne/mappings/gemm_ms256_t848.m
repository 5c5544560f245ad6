// STONNE case gemm_ms256_t848: ./stonne -DenseGEMM -layer_name=gemm_ms256_t848 -M=64 -N=64 -K=32 -T_M=8 -T_N=4 -T_K=8 -num_ms=256 -dn_bw=32 -rn_bw=32 -accumulation_buffer=1 -print_stats=1
Network stonne_gemm_ms256_t848 {
Layer gemm_ms256_t848 {
Type: GEMM
Dimensions { M: 64, N: 64, K: 32 }
Dataflow {
  TemporalMap(4,4) N;
  TemporalMap(8,8) M;
  Cluster(256, P);
  SpatialMap(1,1) N;
  Cluster(64, P);
  SpatialMap(1,1) M;
  Cluster(8, P);
  SpatialMap(4,4) K;
}
}
}
