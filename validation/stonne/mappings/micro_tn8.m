// STONNE case micro_tn8: ./stonne -DenseGEMM -layer_name=micro_tn8 -M=1 -N=8 -K=8 -T_M=1 -T_N=8 -T_K=8 -num_ms=64 -dn_bw=64 -rn_bw=64 -accumulation_buffer=1 -print_stats=1
Network stonne_micro_tn8 {
Layer micro_tn8 {
Type: GEMM
Dimensions { M: 1, N: 8, K: 8 }
Dataflow {
  TemporalMap(8,8) N;
  TemporalMap(1,1) M;
  Cluster(64, P);
  SpatialMap(1,1) N;
  Cluster(8, P);
  SpatialMap(1,1) K;
}
}
}
