// STONNE case gemm_tall_m: ./stonne -DenseGEMM -layer_name=gemm_tall_m -M=128 -N=16 -K=16 -T_M=4 -T_N=1 -T_K=16 -num_ms=64 -dn_bw=16 -rn_bw=4 -accumulation_buffer=1 -print_stats=1
Network stonne_gemm_tall_m {
Layer gemm_tall_m {
Type: GEMM
Dimensions { M: 128, N: 16, K: 16 }
Dataflow {
  TemporalMap(1,1) N;
  TemporalMap(4,4) M;
  Cluster(64, P);
  SpatialMap(1,1) M;
  Cluster(16, P);
  SpatialMap(1,1) K;
}
}
}
