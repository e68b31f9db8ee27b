"""python -m gemmlab.dist_bench, one process per GPU under torchrun: gemmlab.distributed against
torch.distributed + torch.matmul, in the same run, on the same inputs.

    NCCL_NVLS_ENABLE=0 torchrun --nproc-per-node 2 -m gemmlab.dist_bench
    NCCL_NVLS_ENABLE=0 torchrun --nproc-per-node 2 -m gemmlab.dist_bench --widths 2048,4096 --chunks 0,2,4

Per shape (tokens m, hidden h, per-rank width w; bf16 by default), both Megatron patterns:
  column (all-gather + GEMM): x_r (m/P x h) gathered, times w_r^T (h x w)     -> m x w
  row    (GEMM + reduce-scatter): y_r (m x w) times w2_r^T (w x h), summed    -> m/P x h
and, each timed alone with CUDA events (warm-ups, then the median over iterations, every
iteration started together on all ranks after a barrier): T_gemm (torch.matmul of the rank's
whole GEMM, and gemmlab.matmul's), T_comm (all_gather_into_tensor / reduce_scatter_tensor of the
same bytes), the baseline (the collective then torch.matmul, or torch.matmul then the
collective), and gemmlab's overlapped call for each chunk count. "vs max" is the overlapped time
over max(T_gemm, T_comm) (torch's T_gemm), the best overlap can reach; "vs base" the baseline
over it. Times are rank 0's medians; the slowest rank's is within a barrier of it. The default
widths: Llama-70B's 28672 intermediate split over the ranks, and narrower layers where
T_comm approaches T_gemm (the balanced shape; the table shows which). Where torch's own fused
ops (torch.ops.symm_mem.fused_all_gather_matmul / fused_matmul_reduce_scatter) run on the
machine, they are timed on the same inputs too (even shards only); where not, the reason is printed.
"""
import argparse
import os
import statistics

import torch
import torch.distributed as dist

import gemmlab
import gemmlab.distributed as gd

DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16}


def timed(fn, warmup, iters):
    """Median milliseconds of fn() on the current stream, each run after a barrier."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(iters):
        torch.cuda.synchronize()
        dist.barrier()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def column_case(m, h, w, dtype, args, P, r):
    rows = gd.shard_rows(m, P, r)
    x = torch.randn(rows, h, device="cuda").to(dtype)
    wt = (torch.randn(w, h, device="cuda") / h ** 0.5).to(dtype)
    full = torch.empty(m, h, device="cuda", dtype=dtype)
    dist.all_gather_into_tensor(full, x)  # the GEMM alone runs on the gathered values
    t = {}
    t["gemm torch"] = timed(lambda: torch.matmul(full, wt.t()), args.warmup, args.iters)
    t["gemm gemmlab"] = timed(lambda: gemmlab.matmul(full, wt.t()), args.warmup, args.iters)
    t["comm"] = timed(lambda: dist.all_gather_into_tensor(full, x), args.warmup, args.iters)

    def baseline():
        dist.all_gather_into_tensor(full, x)
        return torch.matmul(full, wt.t())
    t["baseline"] = timed(baseline, args.warmup, args.iters)
    for c in args.chunks:
        t[f"gemmlab c={c}"] = timed(lambda c=c: gd.all_gather_matmul(x, wt.t(), rows=m, chunks=c),
                                    args.warmup, args.iters)
    err = _rel_diff(gd.all_gather_matmul(x, wt.t(), rows=m), baseline())
    if P * rows == m:  # torch's fused op gathers equal shards only
        _symm_mem(t, "symm_mem", baseline(), args, lambda g: torch.ops.symm_mem.fused_all_gather_matmul(
            x, [wt.t()], 0, g)[1][0])
    return t, err, 2.0 * m * h * w


def row_case(m, h, w, dtype, args, P, r):
    y = torch.randn(m, w, device="cuda").to(dtype)
    w2 = (torch.randn(h, w, device="cuda") / w ** 0.5).to(dtype)
    part = torch.empty(m, h, device="cuda", dtype=dtype)
    out = torch.empty(gd.shard_rows(m, P, r), h, device="cuda", dtype=dtype)
    t = {}
    t["gemm torch"] = timed(lambda: torch.matmul(y, w2.t(), out=part), args.warmup, args.iters)
    t["gemm gemmlab"] = timed(lambda: gemmlab.matmul(y, w2.t(), out=part), args.warmup, args.iters)
    t["comm"] = timed(lambda: dist.reduce_scatter_tensor(out, part), args.warmup, args.iters)

    def baseline():
        torch.matmul(y, w2.t(), out=part)
        dist.reduce_scatter_tensor(out, part)
        return out
    t["baseline"] = timed(baseline, args.warmup, args.iters)
    pd = args.partial_dtype
    for c in args.chunks:
        t[f"gemmlab c={c}"] = timed(
            lambda c=c: gd.matmul_reduce_scatter(y, w2.t(), chunks=c, partial_dtype=pd),
            args.warmup, args.iters)
    err = _rel_diff(gd.matmul_reduce_scatter(y, w2.t(), partial_dtype=pd), baseline())
    if m % P == 0:
        _symm_mem(t, "symm_mem", baseline().clone(), args,
                  lambda g: torch.ops.symm_mem.fused_matmul_reduce_scatter(y, w2.t(), "sum", 0, g))
    return t, err, 2.0 * m * h * w


def _symm_mem(t, key, ref, args, call):
    """Times torch's own fused op (torch.ops.symm_mem.*, async tensor parallelism) where it runs
    on this machine; otherwise records why not. Its result is checked against the baseline's."""
    group = dist.group.WORLD.group_name
    try:
        from torch.distributed import _symmetric_memory as symm
        if hasattr(symm, "enable_symm_mem_for_group"):
            symm.enable_symm_mem_for_group(group)
        diff = _rel_diff(call(group), ref)
        t[key] = timed(lambda: call(group), args.warmup, args.iters)
        t[key + " diff"] = diff
    except Exception as e:  # noqa: BLE001 (reported, not hidden: the table prints the reason)
        t[key + " why"] = f"{type(e).__name__}: {str(e).splitlines()[0][:100] if str(e) else ''}"


def _rel_diff(got, ref):
    torch.cuda.synchronize()
    return ((got.double() - ref.double()).abs().max() / ref.double().abs().max()).item()


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tokens", type=int, default=8192)
    p.add_argument("--hidden", type=int, default=8192)
    p.add_argument("--widths", default="",
                   help="per-rank widths, comma-separated (default: 28672/P, 4096, 2048, 1024)")
    p.add_argument("--dtype", choices=list(DTYPES), default="bf16")
    p.add_argument("--chunks", default="0,1,2,4", help="chunk counts of gemmlab's calls (0: auto)")
    p.add_argument("--partial-dtype", default=None,
                   help="matmul_reduce_scatter's partial_dtype (default float32; bf16 moves the "
                        "baseline's bytes)")
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--iters", type=int, default=20)
    args = p.parse_args(argv)
    args.chunks = [int(c) for c in args.chunks.split(",") if c]

    local = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local)
    dist.init_process_group("nccl", device_id=torch.device("cuda", local))
    P, r = dist.get_world_size(), dist.get_rank()
    torch.manual_seed(1234 + r)
    dtype = DTYPES[args.dtype]
    widths = [int(w) for w in args.widths.split(",") if w] or [28672 // P, 4096, 2048, 1024]
    rows = []
    for w in widths:
        for name, fn in (("column (all-gather+GEMM)", column_case),
                         ("row (GEMM+reduce-scatter)", row_case)):
            t, err, flops = fn(args.tokens, args.hidden, w, dtype, args, P, r)
            rows.append((name, w, t, err, flops))
    dist.barrier()
    if r == 0:
        _print(rows, args, P)
    gd.release()
    dist.destroy_process_group()


def _print(rows, args, P):
    print(f"# gemmlab.dist_bench: {P} ranks, {torch.cuda.get_device_name()}, {args.dtype}, "
          f"tokens {args.tokens}, hidden {args.hidden}, partial_dtype {args.partial_dtype or 'float32'}, "
          f"median of {args.iters} (ms, rank 0)")
    chunk_cols = [f"gemmlab c={c}" for c in args.chunks]
    head = (["pattern", "width/rank", "T_gemm torch", "T_gemm gemmlab", "T_comm", "baseline"] +
            chunk_cols + ["best", "vs max", "vs base", "TFLOP/s", "max rel diff"])
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for name, w, t, err, flops in rows:
        best = min(t[c] for c in chunk_cols) if chunk_cols else float("nan")
        bound = max(t["gemm torch"], t["comm"])
        cells = [name, str(w)] + [f"{t[c]:.3f}" for c in
                                  ["gemm torch", "gemm gemmlab", "comm", "baseline"] + chunk_cols]
        cells += [f"{best:.3f}", f"{best / bound:.3f}", f"{t['baseline'] / best:.3f}",
                  f"{flops / best / 1e9:.0f}", f"{err:.1e}"]
        print("| " + " | ".join(cells) + " |")
    print()
    print("torch.ops.symm_mem fused ops (torch's async tensor parallelism), same inputs, same run:")
    for name, w, t, err, flops in rows:
        if "symm_mem" in t:
            best = min(t[c] for c in chunk_cols)
            print(f"  {name}, width {w}: {t['symm_mem']:.3f} ms (gemmlab best {best:.3f} ms, "
                  f"{t['symm_mem'] / best:.2f}x), max rel diff to the baseline "
                  f"{t['symm_mem diff']:.1e}")
        else:
            print(f"  {name}, width {w}: did not run: {t.get('symm_mem why', 'uneven shards')}")


if __name__ == "__main__":
    main()
