// STONNE case fc_b1_512_64_dn4: ./stonne -FC -layer_name=fc_b1_512_64_dn4 -M=1 -N=64 -K=512 -T_M=1 -T_N=1 -T_K=64 -num_ms=64 -dn_bw=4 -rn_bw=1 -accumulation_buffer=1 -print_stats=1
Network stonne_fc_b1_512_64_dn4 {
Layer fc_b1_512_64_dn4 {
Type: GEMM
Dimensions { M: 1, N: 64, K: 512 }
Dataflow {
  TemporalMap(1,1) N;
  TemporalMap(1,1) M;
  Cluster(64, P);
  SpatialMap(8,8) K;
}
}
}
