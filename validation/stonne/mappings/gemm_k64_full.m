// STONNE case gemm_k64_full: ./stonne -DenseGEMM -layer_name=gemm_k64_full -M=32 -N=32 -K=64 -T_M=1 -T_N=1 -T_K=64 -num_ms=64 -dn_bw=64 -rn_bw=64 -accumulation_buffer=1 -print_stats=1
Network stonne_gemm_k64_full {
Layer gemm_k64_full {
Type: GEMM
Dimensions { M: 32, N: 32, K: 64 }
Dataflow {
  TemporalMap(1,1) N;
  TemporalMap(1,1) M;
  Cluster(64, P);
  SpatialMap(1,1) K;
}
}
}
