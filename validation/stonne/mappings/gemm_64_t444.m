// STONNE case gemm_64_t444: ./stonne -DenseGEMM -layer_name=gemm_64_t444 -M=64 -N=64 -K=64 -T_M=4 -T_N=4 -T_K=4 -num_ms=64 -dn_bw=8 -rn_bw=8 -accumulation_buffer=1 -print_stats=1
Network stonne_gemm_64_t444 {
Layer gemm_64_t444 {
Type: GEMM
Dimensions { M: 64, N: 64, K: 64 }
Dataflow {
  TemporalMap(4,4) N;
  TemporalMap(4,4) M;
  Cluster(64, P);
  SpatialMap(1,1) N;
  Cluster(16, P);
  SpatialMap(1,1) M;
  Cluster(4, P);
  SpatialMap(16,16) K;
}
}
}
