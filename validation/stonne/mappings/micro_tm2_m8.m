// STONNE case micro_tm2_m8: ./stonne -DenseGEMM -layer_name=micro_tm2_m8 -M=8 -N=1 -K=8 -T_M=2 -T_N=1 -T_K=8 -num_ms=64 -dn_bw=64 -rn_bw=64 -accumulation_buffer=1 -print_stats=1
Network stonne_micro_tm2_m8 {
Layer micro_tm2_m8 {
Type: GEMM
Dimensions { M: 8, N: 1, K: 8 }
Dataflow {
  TemporalMap(1,1) N;
  TemporalMap(2,2) M;
  Cluster(64, P);
  SpatialMap(1,1) M;
  Cluster(8, P);
  SpatialMap(1,1) K;
}
}
}
