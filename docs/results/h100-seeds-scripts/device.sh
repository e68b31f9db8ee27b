#!/usr/bin/env bash
# One device call for issue 13: tests, the seeds bench (normal, fast-math, normal again), the two new
# steps at 4096/4097 for their headers, ncu counters for the seed claims. Everything goes to $OUT.
set -uo pipefail
S=$PWD/.scratch/s13
export PATH=/usr/local/cuda/bin:$PATH
o=$OUT/r; mkdir -p "$o"
date -u +%FT%TZ > "$o/start.txt"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv >> "$o/start.txt" 2>&1
# 1. seeds part of gpu-report (normal + fast-math build), then the normal build once more (spread)
OUT=$o timeout 150 "$S/scripts/gpu-report" "$S" seeds > "$o/gpu-report-seeds.log" 2>&1; echo "gpu-report rc=$?" >> "$o/rc.txt"
timeout 80 "$S/gemm-bench" -q --json "$o/h100-seeds-rerun.json" --kernels simt --dtype fp32 --sizes 1024,1025,2048 > "$o/h100-seeds-rerun.txt" 2>&1; echo "rerun rc=$?" >> "$o/rc.txt"
# 2. the test program (every kernel, every case)
timeout 120 "$S/gemmlab_tests" --gtest_filter='*' > "$o/gpu-tests.txt" 2>&1; echo "tests rc=$?" >> "$o/rc.txt"
# 3. the neighbours of the new steps at 4096^3 / 4097^3 (header lines)
timeout 60 "$S/gemm-bench" -q --json "$o/h100-seeds-4096.json" --kernels simt/04_smem_tiled_zero_pad,simt/05_smem_tiled_8x8_occupancy,simt/06_rect_tiles_8x32,simt/07_smem_double_buffered,simt/08_regblock_2x2,simt/09_regblock_4x4_uncoalesced --dtype fp32 --sizes 4096,4097 > "$o/h100-seeds-4096.txt" 2>&1; echo "4096 rc=$?" >> "$o/rc.txt"
# 3b. SASS of the normal and the fast-math build, simt kernels
if command -v cuobjdump >/dev/null; then
  cuobjdump -sass "$S/gemm-bench" > /tmp/sass-n.txt 2>&1; cuobjdump -sass "$S/gemm-bench-fastmath" > /tmp/sass-fm.txt 2>&1
  python3 "$S/sass_cmp.py" /tmp/sass-n.txt /tmp/sass-fm.txt > "$o/sass-fastmath.txt" 2>&1
else
  echo "no cuobjdump" > "$o/sass-fastmath.txt"
fi
# 4. ncu: one launch per kernel (gemm-bench --profile), a few counters
M_CORE=gpu__time_duration.sum,launch__registers_per_thread,launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem,launch__occupancy_limit_warps,launch__occupancy_limit_blocks,sm__maximum_warps_per_active_cycle_pct,sm__warps_active.avg.pct_of_peak_sustained_active,sm__throughput.avg.pct_of_peak_sustained_elapsed,gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed,l1tex__throughput.avg.pct_of_peak_sustained_active,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,lts__t_sectors_srcunit_tex_op_read.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum
M_STALL=smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio,smsp__issue_active.avg.pct_of_peak_sustained_active
prof() {  # kernel size; skipped past 290 s so the call ends inside its limit
  if (( SECONDS > 290 )); then echo "ncu $1 $2 skipped (time)" >> "$o/rc.txt"; return; fi
  local f="$o/ncu-${1//\//_}-$2.csv"
  timeout 40 ncu --nvtx --nvtx-include "gemmlab_profile/" --clock-control none --csv --metrics "$M_CORE,$M_STALL" \
    "$S/gemm-bench" --profile "$1" --sizes "$2" --dtype fp32 > "$f" 2>&1 ||
  timeout 40 ncu --nvtx --nvtx-include "gemmlab_profile/" --clock-control none --csv --metrics "$M_CORE" \
    "$S/gemm-bench" --profile "$1" --sizes "$2" --dtype fp32 > "$f" 2>&1 || echo "ncu $1 $2 failed" >> "$o/rc.txt"
}
if command -v ncu >/dev/null; then
  for k in simt/04_smem_tiled_zero_pad simt/05_smem_tiled_8x8_occupancy simt/06_rect_tiles_8x32; do prof $k 1024; done
  for k in simt/03_smem_tiled_32 simt/07_smem_double_buffered simt/08_regblock_2x2 simt/09_regblock_4x4_uncoalesced simt/10_regblock_4x4_coalesced simt/11_vectorized_float4 simt/12_rect_regtile_8x4_kunroll4; do prof $k 2048; done
else
  echo "no ncu" >> "$o/rc.txt"
fi
date -u +%FT%TZ >> "$o/start.txt"
cd "$OUT" && tar czf results.tgz r && rm -rf r
