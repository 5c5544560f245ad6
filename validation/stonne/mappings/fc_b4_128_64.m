// STONNE case fc_b4_128_64: ./stonne -FC -layer_name=fc_b4_128_64 -M=4 -N=64 -K=128 -T_M=2 -T_N=4 -T_K=8 -num_ms=64 -dn_bw=8 -rn_bw=8 -accumulation_buffer=1 -print_stats=1
Network stonne_fc_b4_128_64 {
Layer fc_b4_128_64 {
Type: GEMM
Dimensions { M: 4, N: 64, K: 128 }
Dataflow {
  TemporalMap(4,4) N;
  TemporalMap(2,2) M;
  Cluster(64, P);
  SpatialMap(1,1) N;
  Cluster(16, P);
  SpatialMap(1,1) M;
  Cluster(8, P);
  SpatialMap(16,16) K;
}
}
}
