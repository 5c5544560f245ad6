// STONNE case gemm_unicast16_dn8: ./stonne -DenseGEMM -layer_name=gemm_unicast16_dn8 -M=32 -N=64 -K=64 -T_M=1 -T_N=16 -T_K=4 -num_ms=64 -dn_bw=8 -rn_bw=8 -accumulation_buffer=1 -print_stats=1
Network stonne_gemm_unicast16_dn8 {
Layer gemm_unicast16_dn8 {
Type: GEMM
Dimensions { M: 32, N: 64, K: 64 }
Dataflow {
  TemporalMap(16,16) N;
  TemporalMap(1,1) M;
  Cluster(64, P);
  SpatialMap(1,1) N;
  Cluster(4, P);
  SpatialMap(16,16) K;
}
}
}
