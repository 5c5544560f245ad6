// STONNE case micro_fold2: ./stonne -DenseGEMM -layer_name=micro_fold2 -M=1 -N=1 -K=8 -T_M=1 -T_N=1 -T_K=4 -num_ms=64 -dn_bw=64 -rn_bw=64 -accumulation_buffer=1 -print_stats=1
Network stonne_micro_fold2 {
Layer micro_fold2 {
Type: GEMM
Dimensions { M: 1, N: 1, K: 8 }
Dataflow {
  TemporalMap(1,1) N;
  TemporalMap(1,1) M;
  Cluster(64, P);
  SpatialMap(2,2) K;
}
}
}
