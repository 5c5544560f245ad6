// STONNE case gemm_ms256_t884_dn64: ./stonne -DenseGEMM -layer_name=gemm_ms256_t884_dn64 -M=64 -N=64 -K=32 -T_M=8 -T_N=8 -T_K=4 -num_ms=256 -dn_bw=64 -rn_bw=64 -accumulation_buffer=1 -print_stats=1
Network stonne_gemm_ms256_t884_dn64 {
Layer gemm_ms256_t884_dn64 {
Type: GEMM
Dimensions { M: 64, N: 64, K: 32 }
Dataflow {
  TemporalMap(8,8) N;
  TemporalMap(8,8) M;
  Cluster(256, P);
  SpatialMap(1,1) N;
  Cluster(32, P);
  SpatialMap(1,1) M;
  Cluster(4, P);
  SpatialMap(8,8) K;
}
}
}
