// STONNE case gemm_wide_n: ./stonne -DenseGEMM -layer_name=gemm_wide_n -M=16 -N=128 -K=32 -T_M=1 -T_N=8 -T_K=8 -num_ms=64 -dn_bw=8 -rn_bw=8 -accumulation_buffer=1 -print_stats=1
Network stonne_gemm_wide_n {
Layer gemm_wide_n {
Type: GEMM
Dimensions { M: 16, N: 128, K: 32 }
Dataflow {
  TemporalMap(8,8) N;
  TemporalMap(1,1) M;
  Cluster(64, P);
  SpatialMap(1,1) N;
  Cluster(8, P);
  SpatialMap(4,4) K;
}
}
}
