// STONNE case fc_b8_64_64_ms256: ./stonne -FC -layer_name=fc_b8_64_64_ms256 -M=8 -N=64 -K=64 -T_M=8 -T_N=2 -T_K=16 -num_ms=256 -dn_bw=32 -rn_bw=8 -accumulation_buffer=1 -print_stats=1
Network stonne_fc_b8_64_64_ms256 {
Layer fc_b8_64_64_ms256 {
Type: GEMM
Dimensions { M: 8, N: 64, K: 64 }
Dataflow {
  TemporalMap(2,2) N;
  TemporalMap(8,8) M;
  Cluster(256, P);
  SpatialMap(1,1) N;
  Cluster(128, P);
  SpatialMap(1,1) M;
  Cluster(16, P);
  SpatialMap(4,4) K;
}
}
}
