// STONNE case fc_b1_256_128: ./stonne -FC -layer_name=fc_b1_256_128 -M=1 -N=128 -K=256 -T_M=1 -T_N=4 -T_K=16 -num_ms=64 -dn_bw=16 -rn_bw=16 -accumulation_buffer=1 -print_stats=1
Network stonne_fc_b1_256_128 {
Layer fc_b1_256_128 {
Type: GEMM
Dimensions { M: 1, N: 128, K: 256 }
Dataflow {
  TemporalMap(4,4) N;
  TemporalMap(1,1) M;
  Cluster(64, P);
  SpatialMap(1,1) N;
  Cluster(16, P);
  SpatialMap(16,16) K;
}
}
}
