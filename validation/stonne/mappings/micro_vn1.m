// STONNE case micro_vn1: ./stonne -DenseGEMM -layer_name=micro_vn1 -M=1 -N=1 -K=1 -T_M=1 -T_N=1 -T_K=1 -num_ms=64 -dn_bw=64 -rn_bw=64 -accumulation_buffer=1 -print_stats=1
Network stonne_micro_vn1 {
Layer micro_vn1 {
Type: GEMM
Dimensions { M: 1, N: 1, K: 1 }
Dataflow {
  TemporalMap(1,1) N;
  TemporalMap(1,1) M;
  Cluster(64, P);
}
}
}
