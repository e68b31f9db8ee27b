"""python -m gemmlab.bench: gemmlab.matmul against torch.matmul in the same process, on the same
random inputs (normal, non-zero), timed with CUDA events (warm-ups, then the median of many runs
enqueued back to back, so host overhead is hidden behind the GPU), plus the per-call host
overhead of a small GEMM (Python wrapper vs the C++ call vs torch).

    python -m gemmlab.bench                                  # default cases, table on stdout
    python -m gemmlab.bench --cases 4096x4096x4096:bf16:nn --plot bench.png --markdown bench.md
    python -m gemmlab.bench --cases "" --fused-cases 8192x3072x768:bf16 --overhead-size 0

A case is MxNxK:dtype:layout: dtype fp32, tf32, bf16 or fp16; layout two letters for a and b,
n = stored as op(X) (a m x k, b k x n), t = stored transposed (a k x m; b n x k, e.g. an
nn.Linear weight, so op(B) = B^T). "gemmlab" returns the input dtype, written by gemmlab itself
(bf16 in, bf16 out: no float32 intermediate, no cast), "gemmlab out=fp32" writes a float32 out.

The fused table (--fused-cases MxNxK:dtype, x m x k and an nn.Linear weight n x k) compares, per
case, the 16-bit product (the default path, input dtype out) with torch.matmul, and linear + bias
+ GELU in one gemmlab call (bias=, activation="gelu") with torch's F.linear followed by F.gelu.
"""
import argparse
import datetime
import statistics
import time

import torch

import gemmlab
from gemmlab import _C

DEFAULT_CASES = [
    "4097x4097x4097:bf16:nn",
    "4096x4096x4096:bf16:nn",
    "8192x50257x768:bf16:nt",   # GPT-2 LM head, odd vocabulary
    "8192x50304x768:bf16:nt",   # GPT-2 LM head, vocabulary padded to a multiple of 64
    "4097x4097x4097:fp16:nn",
    "4097x4097x4097:tf32:nn",
    "4096x4096x4096:fp32:nn",
    "4097x4097x4097:fp32:nn",
]
DEFAULT_FUSED_CASES = [
    "8192x3072x768:bf16",       # GPT-2 MLP up-projection (+ bias, GELU)
    "8192x768x3072:bf16",       # the down-projection's shape
    "4097x4097x4097:bf16",      # misaligned rows
    "8192x3072x768:fp16",
]
_DTYPES = {"fp32": torch.float32, "tf32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}


def parse_case(text):
    shape, dtype, layout = text.split(":")
    m, n, k = (int(v) for v in shape.lower().split("x"))
    if dtype not in _DTYPES or len(layout) != 2 or set(layout) - {"n", "t"}:
        raise ValueError(f"bad case {text!r}: MxNxK:(fp32|tf32|bf16|fp16):(nn|nt|tn|tt)")
    return m, n, k, dtype, layout


def make_operands(m, n, k, dtype, layout, generator):
    """a (m x k) and b (k x n) as views of their stored layouts."""
    def stored(rows, cols, transposed):
        shape = (cols, rows) if transposed else (rows, cols)
        x = torch.randn(shape, device="cuda", dtype=torch.float32, generator=generator)
        x = x.to(_DTYPES[dtype])
        return x.t() if transposed else x
    return stored(m, k, layout[0] == "t"), stored(k, n, layout[1] == "t")


def time_ms(fn, warmup, runs):
    """Median milliseconds of fn() by CUDA events, runs enqueued back to back."""
    for _ in range(warmup):
        fn()
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
              for _ in range(runs)]
    for start, end in events:
        start.record()
        fn()
        end.record()
    torch.cuda.synchronize()
    return statistics.median(start.elapsed_time(end) for start, end in events)


def bench_case(case, warmup, runs, generator):
    m, n, k, dtype, layout = parse_case(case)
    a, b = make_operands(m, n, k, dtype, layout, generator)
    tf32 = dtype == "tf32"
    precision = "tf32" if tf32 else None
    out32 = torch.empty(m, n, device="cuda", dtype=torch.float32)
    previous = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = tf32
    try:
        ref = torch.matmul(a, b)
        got = gemmlab.matmul(a, b, precision=precision)
        diff = ((got.float() - ref.float()).abs().max() / ref.float().abs().max()).item()
        t_torch = time_ms(lambda: torch.matmul(a, b), warmup, runs)
    finally:
        torch.backends.cuda.matmul.allow_tf32 = previous
    t_gl = time_ms(lambda: gemmlab.matmul(a, b, precision=precision), warmup, runs)
    t_gl32 = None
    if a.dtype != torch.float32:
        t_gl32 = time_ms(lambda: gemmlab.matmul(a, b, out=out32, precision=precision), warmup, runs)
    flop = 2.0 * m * n * k
    tflops = lambda ms: None if ms is None else flop / (ms * 1e-3) / 1e12  # noqa: E731
    return {"case": case, "m": m, "n": n, "k": k, "dtype": dtype, "layout": layout,
            "kernel": gemmlab.auto_kernel(a, b, precision=precision),
            "torch": tflops(t_torch), "gemmlab": tflops(t_gl), "gemmlab_out32": tflops(t_gl32),
            "max_rel_diff": diff}


def parse_fused_case(text):
    shape, dtype = text.split(":")
    m, n, k = (int(v) for v in shape.lower().split("x"))
    if dtype not in _DTYPES:
        raise ValueError(f"bad fused case {text!r}: MxNxK:(fp32|tf32|bf16|fp16)")
    return m, n, k, dtype


def _rel_diff(got, ref):
    return ((got.float() - ref.float()).abs().max() / ref.float().abs().max()).item()


def bench_fused_case(case, warmup, runs, generator):
    """Two rows: the plain product in the input dtype (gemmlab's default path) against
    torch.matmul, and y = gelu(x @ w.t() + bias) in one gemmlab call against F.linear + F.gelu."""
    m, n, k, dtype = parse_fused_case(case)
    tf32 = dtype == "tf32"
    precision = "tf32" if tf32 else None
    t = _DTYPES[dtype]
    x = torch.randn(m, k, device="cuda", generator=generator).to(t)
    w = (torch.randn(n, k, device="cuda", generator=generator) / k ** 0.5).to(t)
    bias = torch.randn(n, device="cuda", generator=generator).to(t)
    F = torch.nn.functional
    previous = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = tf32
    try:
        ref_mm, ref_fused = torch.matmul(x, w.t()), F.gelu(F.linear(x, w, bias))
        t_torch_mm = time_ms(lambda: torch.matmul(x, w.t()), warmup, runs)
        t_torch_fused = time_ms(lambda: F.gelu(F.linear(x, w, bias)), warmup, runs)
    finally:
        torch.backends.cuda.matmul.allow_tf32 = previous
    got_mm = gemmlab.matmul(x, w.t(), precision=precision)
    got_fused = gemmlab.matmul(x, w.t(), bias=bias, activation="gelu", precision=precision)
    t_gl_mm = time_ms(lambda: gemmlab.matmul(x, w.t(), precision=precision), warmup, runs)
    t_gl_fused = time_ms(lambda: gemmlab.matmul(x, w.t(), bias=bias, activation="gelu",
                                                precision=precision), warmup, runs)
    flop = 2.0 * m * n * k
    tflops = lambda ms: flop / (ms * 1e-3) / 1e12  # noqa: E731
    base = {"case": case, "m": m, "n": n, "k": k, "dtype": dtype}
    return [
        dict(base, what=f"matmul, {dtype} out", torch_what="torch.matmul",
             out_dtype=str(got_mm.dtype).replace("torch.", ""), torch=tflops(t_torch_mm),
             gemmlab=tflops(t_gl_mm), torch_ms=t_torch_mm, gemmlab_ms=t_gl_mm,
             kernel=gemmlab.auto_kernel(x, w.t(), precision=precision),
             max_rel_diff=_rel_diff(got_mm, ref_mm)),
        dict(base, what="linear + bias + gelu", torch_what="F.gelu(F.linear(x, w, bias))",
             out_dtype=str(got_fused.dtype).replace("torch.", ""), torch=tflops(t_torch_fused),
             gemmlab=tflops(t_gl_fused), torch_ms=t_torch_fused, gemmlab_ms=t_gl_fused,
             kernel=gemmlab.auto_kernel(x, w.t(), bias=bias, activation="gelu",
                                        precision=precision),
             max_rel_diff=_rel_diff(got_fused, ref_fused)),
    ]


def host_us_per_call(fn, calls, repeats):
    """Median host microseconds per call over `repeats` loops of `calls` calls (synchronized
    between loops; the GPU keeps up with small GEMMs, so the launch queue never fills)."""
    samples = []
    for _ in range(repeats):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        samples.append((time.perf_counter() - t0) / calls * 1e6)
    torch.cuda.synchronize()
    return statistics.median(samples)


def overhead(size, dtype, calls, repeats, generator):
    """Host microseconds per call of a size^3 GEMM, several ways."""
    a, b = make_operands(size, size, size, dtype, "nn", generator)
    out32 = torch.empty(size, size, device="cuda", dtype=torch.float32)
    out = torch.empty(size, size, device="cuda", dtype=a.dtype)
    bias = torch.zeros(size, device="cuda", dtype=a.dtype)
    dev = a.get_device()
    stream = torch.cuda.current_stream().cuda_stream
    prec = {"fp32": 0, "tf32": 1, "bf16": 2, "fp16": 3}[dtype]
    d_type = {torch.float32: 0, torch.bfloat16: 2, torch.float16: 3}[a.dtype]

    def cpp():  # `calls` gemm(GemmDesc) calls in one C++ loop, input dtype out; seconds per call
        s = _C._bench_cpp_calls(calls, 0, 0, size, size, size, a.data_ptr(), size, b.data_ptr(),
                                size, out.data_ptr(), size, d_type, prec, "auto", stream, dev)
        if s < 0:
            raise RuntimeError(_C.last_error_message())
        return s * 1e6
    cpp()
    samples = []
    for _ in range(repeats):
        torch.cuda.synchronize()
        samples.append(cpp())
    rows = {"C++ gemmlab::gemm loop": statistics.median(samples)}
    # _C.gemm: op_a, op_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, c_type, d, ldd, d_type,
    # bias, bias_type, act, precision, kernel, stream, device, batch, stride_a/b/c/d
    args = (0, 0, size, size, size, 1.0, a.data_ptr(), size, b.data_ptr(), size, 0.0, 0, 0, 0,
            out.data_ptr(), size, d_type, 0, 0, 0, prec, "auto", stream, dev, 1, 0, 0, 0, 0)
    ways = {
        "gemmlab._C.gemm(ints) from Python": lambda: _C.gemm(*args),
        "gemmlab.matmul(a, b, out=out)": lambda: gemmlab.matmul(a, b, out=out),
        "gemmlab.matmul(a, b, out=fp32)": lambda: gemmlab.matmul(a, b, out=out32),
        "gemmlab.matmul(a, b)": lambda: gemmlab.matmul(a, b),
        "gemmlab.matmul(a, b, bias=, activation='gelu')":
            lambda: gemmlab.matmul(a, b, bias=bias, activation="gelu"),
        "torch.matmul(a, b)": lambda: torch.matmul(a, b),
        "torch.mm(a, b, out=out)": lambda: torch.mm(a, b, out=out),
        "F.gelu(F.linear(a, b, bias))": lambda: torch.nn.functional.gelu(
            torch.nn.functional.linear(a, b, bias)),
    }
    for name, fn in ways.items():
        for _ in range(10):
            fn()
        rows[name] = host_us_per_call(fn, calls, repeats)
    return rows


def header():
    p = torch.cuda.get_device_properties(0)
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return (f"device: {p.name} ({p.multi_processor_count} SMs); date: {now}; torch {torch.__version__} "
            f"(CUDA {torch.version.cuda}); gemmlab {gemmlab.__version__}")


def fmt(x, digits=1):
    return "-" if x is None else f"{x:.{digits}f}"


def fused_table(rows):
    lines = ["| case (M x N x K, dtype) | call | out dtype | torch | torch ms | gemmlab ms | "
             "torch TFLOP/s | gemmlab TFLOP/s | ratio | gemmlab kernel | max rel diff |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['m']} x {r['n']} x {r['k']} {r['dtype']} | {r['what']} | {r['out_dtype']} | "
                     f"{r['torch_what']} | {r['torch_ms']:.3f} | {r['gemmlab_ms']:.3f} | "
                     f"{fmt(r['torch'])} | {fmt(r['gemmlab'])} | {r['gemmlab'] / r['torch']:.2f}x | "
                     f"{r['kernel']} | {r['max_rel_diff']:.1e} |")
    return "\n".join(lines)


def table(results, overheads, size, dtype):
    lines = ["| case (M x N x K, dtype, layout a b) | torch.matmul TFLOP/s | gemmlab TFLOP/s | "
             "ratio | gemmlab out=fp32 TFLOP/s | ratio | gemmlab kernel | max rel diff |",
             "|---|---|---|---|---|---|---|---|"]
    for r in results:
        ratio = lambda x: "-" if x is None else f"{x / r['torch']:.2f}x"  # noqa: E731
        lines.append(f"| {r['m']} x {r['n']} x {r['k']} {r['dtype']} {r['layout']} | {fmt(r['torch'])} | "
                     f"{fmt(r['gemmlab'])} | {ratio(r['gemmlab'])} | {fmt(r['gemmlab_out32'])} | "
                     f"{ratio(r['gemmlab_out32'])} | {r['kernel']} | {r['max_rel_diff']:.1e} |")
    if overheads:
        lines += ["", f"Host time per call, {size}^3 {dtype} (microseconds, median):", "",
                  "| call | us per call | over the C++ call |", "|---|---|---|"]
        base = overheads["C++ gemmlab::gemm loop"]
        for name, us in overheads.items():
            lines.append(f"| {name} | {us:.2f} | {us - base:+.2f} |")
    return "\n".join(lines)


def plot(results, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    labels = [f"{r['m']}x{r['n']}x{r['k']}\n{r['dtype']} {r['layout']}" for r in results]
    series = [("torch.matmul", "torch"), ("gemmlab.matmul", "gemmlab"),
              ("gemmlab.matmul out=fp32", "gemmlab_out32")]
    width = 0.27
    fig, ax = plt.subplots(figsize=(max(8, 1.6 * len(results)), 4.8))
    for i, (label, key) in enumerate(series):
        xs = [j + (i - 1) * width for j in range(len(results))]
        ax.bar(xs, [r[key] or 0 for r in results], width, label=label)
    ax.set_xticks(range(len(results)))
    ax.set_xticklabels(labels, fontsize=8)
    ax.set_ylabel("TFLOP/s")
    ax.set_title(header(), fontsize=8)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m gemmlab.bench", description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", default=",".join(DEFAULT_CASES), help="comma-separated MxNxK:dtype:layout")
    ap.add_argument("--fused-cases", default=",".join(DEFAULT_FUSED_CASES),
                    help="comma-separated MxNxK:dtype for the 16-bit-output and linear+bias+gelu "
                         "table (empty: skip)")
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--overhead-size", type=int, default=64, help="the small GEMM of the overhead table (0: skip)")
    ap.add_argument("--overhead-dtype", default="fp32", choices=sorted(_DTYPES))
    ap.add_argument("--plot", metavar="FILE", help="write a bar chart (matplotlib)")
    ap.add_argument("--markdown", metavar="FILE", help="also write the table to FILE")
    args = ap.parse_args(argv)
    if not torch.cuda.is_available():
        raise SystemExit("gemmlab.bench needs a CUDA GPU")
    generator = torch.Generator(device="cuda").manual_seed(0)
    results = [bench_case(c, args.warmup, args.runs, generator) for c in args.cases.split(",") if c]
    overheads = None
    if args.overhead_size > 0:
        overheads = overhead(args.overhead_size, args.overhead_dtype, 200, 25, generator)
    fused = [row for c in args.fused_cases.split(",") if c
             for row in bench_fused_case(c, args.warmup, args.runs, generator)]
    text = header() + "\n\n" + table(results, overheads, args.overhead_size, args.overhead_dtype)
    if fused:
        text += ("\n\n16-bit output and fused linear + bias + GELU (gemmlab.matmul, one call) "
                 "against torch:\n\n" + fused_table(fused))
    print(text)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write("# gemmlab.matmul vs torch.matmul (python -m gemmlab.bench)\n\n" + text + "\n")
    if args.plot:
        plot(results, args.plot)


if __name__ == "__main__":
    main()
