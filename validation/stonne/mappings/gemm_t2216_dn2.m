// STONNE case gemm_t2216_dn2: ./stonne -DenseGEMM -layer_name=gemm_t2216_dn2 -M=32 -N=32 -K=64 -T_M=2 -T_N=2 -T_K=16 -num_ms=64 -dn_bw=2 -rn_bw=2 -accumulation_buffer=1 -print_stats=1
Network stonne_gemm_t2216_dn2 {
Layer gemm_t2216_dn2 {
Type: GEMM
Dimensions { M: 32, N: 32, K: 64 }
Dataflow {
  TemporalMap(2,2) N;
  TemporalMap(2,2) M;
  Cluster(64, P);
  SpatialMap(1,1) N;
  Cluster(32, P);
  SpatialMap(1,1) M;
  Cluster(16, P);
  SpatialMap(4,4) K;
}
}
}
