#!/usr/bin/env bash
# Second device call for issue 13: step 5 as the seed wrote it (no minimum-blocks launch bound: nvcc
# gives it 48 registers) against the committed step 5 (32 registers), same session; ncu on both and
# on steps 10 and 13 (seed 002 kernels 5 and 6) at 1024^3 and 2048^3.
set -uo pipefail
S=$PWD/.scratch/s13
export PATH=/usr/local/cuda/bin:$PATH
o=$OUT/r2; mkdir -p "$o"
date -u +%FT%TZ > "$o/start.txt"
K=simt/04_smem_tiled_zero_pad,simt/05_smem_tiled_8x8_occupancy
timeout 60 "$S/gemm-bench" -q --json "$o/h100-seeds-05-bounds.json" --kernels $K --dtype fp32 --sizes 1024,1025,2048 > "$o/h100-seeds-05-bounds.txt" 2>&1; echo "bounds rc=$?" >> "$o/rc.txt"
timeout 60 "$S/gemm-bench-05-nobounds" -q --json "$o/h100-seeds-05-nobounds.json" --kernels $K --dtype fp32 --sizes 1024,1025,2048 > "$o/h100-seeds-05-nobounds.txt" 2>&1; echo "nobounds rc=$?" >> "$o/rc.txt"
M=gpu__time_duration.sum,launch__registers_per_thread,launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem,launch__occupancy_limit_warps,launch__occupancy_limit_blocks,sm__maximum_warps_per_active_cycle_pct,sm__warps_active.avg.pct_of_peak_sustained_active,sm__throughput.avg.pct_of_peak_sustained_elapsed,gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed,l1tex__throughput.avg.pct_of_peak_sustained_active,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,lts__t_sectors_srcunit_tex_op_read.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio,smsp__issue_active.avg.pct_of_peak_sustained_active
prof() {  # binary kernel size outname
  if (( SECONDS > 250 )); then echo "ncu $2 $3 skipped (time)" >> "$o/rc.txt"; return; fi
  timeout 40 ncu --nvtx --nvtx-include "gemmlab_profile/" --clock-control none --csv --metrics "$M" \
    "$S/$1" --profile "$2" --sizes "$3" --dtype fp32 > "$o/ncu-$4-$3.csv" 2>&1 || echo "ncu $2 $3 failed" >> "$o/rc.txt"
}
prof gemm-bench-05-nobounds simt/05_smem_tiled_8x8_occupancy 1024 simt_05_smem_tiled_8x8_occupancy_nobounds
prof gemm-bench simt/10_regblock_4x4_coalesced 1024 simt_10_regblock_4x4_coalesced
prof gemm-bench simt/13_regblock_coalesced_double_buffered 1024 simt_13_regblock_coalesced_double_buffered
prof gemm-bench simt/13_regblock_coalesced_double_buffered 2048 simt_13_regblock_coalesced_double_buffered
date -u +%FT%TZ >> "$o/start.txt"
cd "$OUT" && tar czf results2.tgz r2 && rm -rf r2
