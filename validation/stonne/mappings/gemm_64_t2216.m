// STONNE case gemm_64_t2216: ./stonne -DenseGEMM -layer_name=gemm_64_t2216 -M=64 -N=64 -K=64 -T_M=2 -T_N=2 -T_K=16 -num_ms=64 -dn_bw=16 -rn_bw=16 -accumulation_buffer=1 -print_stats=1
Network stonne_gemm_64_t2216 {
Layer gemm_64_t2216 {
Type: GEMM
Dimensions { M: 64, N: 64, K: 64 }
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
