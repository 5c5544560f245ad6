// STONNE case micro_tn2: ./stonne -DenseGEMM -layer_name=micro_tn2 -M=1 -N=2 -K=8 -T_M=1 -T_N=2 -T_K=8 -num_ms=64 -dn_bw=64 -rn_bw=64 -accumulation_buffer=1 -print_stats=1
Network stonne_micro_tn2 {
Layer micro_tn2 {
Type: GEMM
Dimensions { M: 1, N: 2, K: 8 }
Dataflow {
  TemporalMap(2,2) N;
  TemporalMap(1,1) M;
  Cluster(64, P);
  SpatialMap(1,1) N;
  Cluster(8, P);
  SpatialMap(1,1) K;
}
}
}
