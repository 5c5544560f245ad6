// STONNE case fc_b1_128_256_ms256: ./stonne -FC -layer_name=fc_b1_128_256_ms256 -M=1 -N=256 -K=128 -T_M=1 -T_N=8 -T_K=32 -num_ms=256 -dn_bw=64 -rn_bw=32 -accumulation_buffer=1 -print_stats=1
Network stonne_fc_b1_128_256_ms256 {
Layer fc_b1_128_256_ms256 {
Type: GEMM
Dimensions { M: 1, N: 256, K: 128 }
Dataflow {
  TemporalMap(8,8) N;
  TemporalMap(1,1) M;
  Cluster(256, P);
  SpatialMap(1,1) N;
  Cluster(32, P);
  SpatialMap(4,4) K;
}
}
}
