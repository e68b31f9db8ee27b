"""The multi-rank GPU test of gemmlab.distributed, one process per GPU:

    NCCL_NVLS_ENABLE=0 torchrun --nproc-per-node 2 python/tests/dist_worker.py   (or 1)

(test_dist_gpu.py launches it.) Every rank builds the same full operands from one seed, takes its
shards, and checks its result elementwise against the unsharded float64 product:
    |got - ref| <= slack * (u_out |ref| + e_in S) + 1e-5,   S = |A| @ |B| + |bias|
(u_out: the output dtype's unit roundoff; e_in: float32 accumulation over k terms, k 2^-24, plus
tf32's rounding of the inputs, 2^-9, and a 16-bit partial's rounding; 1e-5: the activation's
own error), for float32, tf32, bfloat16 and float16, shard sizes that divide evenly and that do
not, both weight layouts (b and w.t()), with and without bias + GELU; then that chunks 1, 2, 3
(and auto) give bit-identical results, the modules, and the errors. Exit status 0 when every
rank passed; each failure is printed with its rank."""
import os
import sys
import traceback

import torch
import torch.distributed as dist

import gemmlab
import gemmlab.distributed as gd
from gemmlab.torch import ColumnParallelLinear, RowParallelLinear

F = torch.nn.functional
DTYPES = {  # name -> (torch dtype, precision, e_in from the inputs)
    "fp32": (torch.float32, None, 0.0),
    "tf32": (torch.float32, "tf32", 2.0 ** -9),   # both inputs rounded (or truncated) to tf32
    "bf16": (torch.bfloat16, None, 0.0),
    "fp16": (torch.float16, None, 0.0),
}
UNIT = {torch.float32: 2.0 ** -24, torch.bfloat16: 2.0 ** -8, torch.float16: 2.0 ** -11}
SLACK = 1.25

RANK = WORLD = 0
failures = []


def rand(*shape, seed, dtype, scale=0.5):
    g = torch.Generator(device="cuda").manual_seed(seed)
    return (torch.randn(*shape, device="cuda", generator=g) * scale).to(dtype)


def check(name, got, a, b, bias, activation, dtype, e_in, k):
    """got against act(a @ b + bias) in float64 (a, b, bias: the unsharded operands' rows/cols)."""
    torch.cuda.synchronize()
    z = a.double() @ b.double()
    s = a.double().abs() @ b.double().abs()
    if bias is not None:
        z, s = z + bias.double(), s + bias.double().abs()
    ref = z if activation is None else F.gelu(z)
    bound = SLACK * (UNIT[got.dtype] * ref.abs() + (e_in + k * 2.0 ** -24) * s) + 1e-5
    err = (got.double() - ref).abs()
    bad = err > bound
    if got.shape != ref.shape or got.dtype != dtype or bad.any():
        where = bad.nonzero()[:1].tolist() if got.shape == ref.shape else "shape"
        failures.append(f"rank {RANK}: {name}: shape {tuple(got.shape)} vs {tuple(ref.shape)}, "
                        f"dtype {got.dtype}, max err {err.max().item():.3e}, first bad {where}")


def case(name, fn):
    try:
        fn()
    except Exception:  # noqa: BLE001  (reported per rank; the other cases still run)
        failures.append(f"rank {RANK}: {name}: {traceback.format_exc()}")


def all_gather_cases():
    for dname, (dtype, precision, e_in) in DTYPES.items():
        for m in (128 * WORLD, 128 * WORLD + 1):  # even; uneven (the first rank one more)
            k = 96
            n_r = 100 + 12 * RANK  # differs per rank; 100 bf16 values: rows padded to 16 bytes
            for transposed in (False, True):
                for epilogue in (False, True):
                    name = f"all_gather {dname} m={m} n_r={n_r} T={transposed} bias+gelu={epilogue}"

                    def run(m=m, k=k, n_r=n_r, dtype=dtype, precision=precision, e_in=e_in,
                            transposed=transposed, epilogue=epilogue):
                        a = rand(m, k, seed=1, dtype=dtype)
                        w = rand(n_r, k, seed=100 + RANK, dtype=dtype)  # this rank's weight
                        b = w.t() if transposed else w.t().contiguous()
                        bias = rand(n_r, seed=200 + RANK, dtype=dtype) if epilogue else None
                        act = "gelu" if epilogue else None
                        begin, rows = gd.shard_offset(m, WORLD, RANK), gd.shard_rows(m, WORLD, RANK)
                        shard = a[begin:begin + rows]
                        y = gd.all_gather_matmul(shard, b, rows=m, bias=bias, activation=act,
                                                 precision=precision)
                        check(name, y, a, b, bias, act, dtype, e_in, k)
                        y2 = gd.all_gather_matmul(shard, b, bias=bias, activation=act,  # rows inferred
                                                  precision=precision, gathered=torch.empty_like(a))
                        torch.cuda.synchronize()
                        if not torch.equal(y, y2):
                            failures.append(f"rank {RANK}: {name}: rows=None differs from rows=m")
                    case(name, run)


def reduce_scatter_cases():
    for dname, (dtype, precision, e_in) in DTYPES.items():
        partials = (None,) if dtype == torch.float32 else (None, dtype)
        for m in (128 * WORLD, 128 * WORLD + 1):
            ks = [64 + 8 * s for s in range(WORLD)]  # K slices differ per rank
            k_total, k_begin, k_r = sum(ks), sum(ks[:RANK]), ks[RANK]
            n = 160
            for partial in partials:
                for transposed in (False, True):
                    for epilogue in (False, True):
                        name = (f"reduce_scatter {dname} m={m} k_r={k_r} partial={partial} "
                                f"T={transposed} bias+gelu={epilogue}")

                        def run(m=m, n=n, dtype=dtype, precision=precision, e_in=e_in,
                                partial=partial, transposed=transposed, epilogue=epilogue):
                            a = rand(m, k_total, seed=3, dtype=dtype)
                            w = rand(n, k_total, seed=4, dtype=dtype)  # the unsharded weight
                            bias = rand(n, seed=5, dtype=dtype) if epilogue else None
                            act = "gelu" if epilogue else None
                            a_r = a[:, k_begin:k_begin + k_r]  # a strided view: ld = k_total
                            w_r = w[:, k_begin:k_begin + k_r].contiguous()
                            b_r = w_r.t() if transposed else w_r.t().contiguous()
                            y = gd.matmul_reduce_scatter(a_r, b_r, bias=bias, activation=act,
                                                         precision=precision, partial_dtype=partial)
                            begin, rows = gd.shard_offset(m, WORLD, RANK), gd.shard_rows(m, WORLD, RANK)
                            extra = 0.0 if partial is None else UNIT[partial]
                            check(name, y, a[begin:begin + rows], w.t(), bias, act, dtype,
                                  e_in + extra, k_total + WORLD)
                        case(name, run)


def determinism_cases():
    for dname in ("fp32", "bf16"):
        dtype, precision, _ = DTYPES[dname]
        m, k, n = 700 * WORLD + 1, 256, 256

        def run_ag(dtype=dtype, precision=precision):
            a = rand(m, k, seed=7, dtype=dtype)
            w = rand(n, k, seed=8 + RANK, dtype=dtype)
            bias = rand(n, seed=9, dtype=dtype)
            begin, rows = gd.shard_offset(m, WORLD, RANK), gd.shard_rows(m, WORLD, RANK)
            ys = [gd.all_gather_matmul(a[begin:begin + rows], w.t(), rows=m, bias=bias,
                                       activation="gelu", precision=precision, chunks=c)
                  for c in (1, 2, 3, 0)]
            torch.cuda.synchronize()
            for c, y in zip((2, 3, 0), ys[1:]):
                if not torch.equal(ys[0], y):
                    failures.append(f"rank {RANK}: all_gather {dtype}: chunks={c} differs from chunks=1")

        def run_rs(dtype=dtype, precision=precision):
            a = rand(m, k, seed=10 + RANK, dtype=dtype)
            w = rand(n, k, seed=11 + RANK, dtype=dtype)
            ys = [gd.matmul_reduce_scatter(a, w.t(), precision=precision, chunks=c)
                  for c in (1, 2, 3, 0)]
            torch.cuda.synchronize()
            for c, y in zip((2, 3, 0), ys[1:]):
                if not torch.equal(ys[0], y):
                    failures.append(f"rank {RANK}: reduce_scatter {dtype}: chunks={c} differs from chunks=1")
        case(f"determinism all_gather {dname}", run_ag)
        case(f"determinism reduce_scatter {dname}", run_rs)


def module_cases():
    def run():
        torch.manual_seed(0)  # the same full layers on every rank
        h, f, m = 128, 4 * 96, 64 * WORLD + 1
        fc1 = torch.nn.Linear(h, f, device="cuda", dtype=torch.bfloat16)
        fc2 = torch.nn.Linear(f, h, device="cuda", dtype=torch.bfloat16)
        col = ColumnParallelLinear.from_linear(fc1, activation="gelu")
        row = RowParallelLinear.from_linear(fc2)
        x = rand(m, h, seed=12, dtype=torch.bfloat16)
        begin, rows = gd.shard_offset(m, WORLD, RANK), gd.shard_rows(m, WORLD, RANK)
        with torch.no_grad():
            y = row(col(x[begin:begin + rows], rows=m))
            hidden = F.gelu(F.linear(x.double(), fc1.weight.double(), fc1.bias.double()))
            ref = F.linear(hidden, fc2.weight.double(), fc2.bias.double())
        torch.cuda.synchronize()
        err = (y.double() - ref[begin:begin + rows].double()).abs().max().item()
        scale = ref.double().abs().max().item()
        if y.shape != (rows, h) or err > 3e-2 * scale:
            failures.append(f"rank {RANK}: modules: shape {tuple(y.shape)}, max err {err:.3e} "
                            f"(scale {scale:.3e})")
        try:
            col(x[begin:begin + rows], rows=m)  # weights require grad, grad mode on
            failures.append(f"rank {RANK}: modules: no error with gradients required")
        except RuntimeError as e:
            if "forward passes only" not in str(e):
                raise
    case("modules", run)


def error_cases():
    if WORLD < 2:
        return

    def run():
        m = 64 if RANK == 0 else 72  # the ranks disagree on m: InvalidValue on every rank
        a = rand(m, 64, seed=13, dtype=torch.bfloat16)
        b = rand(64, 64, seed=14, dtype=torch.bfloat16)
        try:
            gd.matmul_reduce_scatter(a, b)
            failures.append(f"rank {RANK}: disagreeing shapes gave no error")
        except gemmlab.GemmlabError as e:
            if e.status != "InvalidValue" or "disagree" not in str(e):
                failures.append(f"rank {RANK}: disagreeing shapes: {e.status}: {e}")
    case("shapes that disagree", run)


def main():
    global RANK, WORLD
    local = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local)
    dist.init_process_group("nccl", device_id=torch.device("cuda", local))
    RANK, WORLD = dist.get_rank(), dist.get_world_size()
    all_gather_cases()
    reduce_scatter_cases()
    determinism_cases()
    module_cases()
    error_cases()
    count = torch.tensor([len(failures)], device="cuda")
    dist.all_reduce(count)
    for line in failures:
        print(line, file=sys.stderr, flush=True)
    if RANK == 0:
        print(f"dist_worker: {WORLD} rank(s), {int(count.item())} failure(s)", flush=True)
    gd.release()
    dist.destroy_process_group()
    sys.exit(1 if count.item() else 0)


if __name__ == "__main__":
    main()
