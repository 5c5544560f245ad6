// STONNE case tpu8_ragged_20x12x16: ./stonne -DenseGEMM -layer_name=tpu8_ragged_20x12x16 -M=20 -N=12 -K=16 -T_M=8 -T_N=8 -T_K=1 -ms_rows=8 -ms_cols=8 -dn_bw=16 -rn_bw=16 -accumulation_buffer=1 -rn_type=TEMPORALRN -mn_type=OS_MESH -mem_ctrl=TPU_OS_DENSE -print_stats=1
Network stonne_tpu8_ragged_20x12x16 {
Layer tpu8_ragged_20x12x16 {
Type: GEMM
Dimensions { M: 20, N: 12, K: 16 }
Dataflow {
  TemporalMap(8,8) M;
  SpatialMap(1,1) N;
  TemporalMap(1,1) K;
  Cluster(8, P);
  SpatialMap(1,1) M;
}
}
}
