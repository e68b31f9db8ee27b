"""gemmlab.distributed without a GPU: the import (also without gemmlab._dist), the shard rule,
argument errors raised before any process group, communication or GPU work, and the messages for
no process group, CPU tensors, no GPU and no NCCL extension (a one-rank gloo group in-process)."""
import os
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed")
import gemmlab  # noqa: E402
import gemmlab.distributed as gd  # noqa: E402
from gemmlab.torch import ColumnParallelLinear, RowParallelLinear  # noqa: E402

needs_dist = pytest.mark.skipif(not torch.distributed.is_available(),
                                reason="this PyTorch build has no torch.distributed")


def t(*shape, dtype=torch.bfloat16, device="meta"):
    return torch.empty(*shape, dtype=dtype, device=device)


def test_import_and_available():
    ok, reason = gd.available()
    assert isinstance(ok, bool) and isinstance(reason, str)
    assert ok == (reason == "")
    assert gd._dist is None or gd._dist.nccl_version[0] == 2
    assert gemmlab.torch.ColumnParallelLinear is ColumnParallelLinear


def test_import_without_the_nccl_extension():
    """`import gemmlab` and `import gemmlab.distributed` work when gemmlab._dist cannot be
    imported; using it says why."""
    code = ("import sys; sys.modules['gemmlab._dist'] = None\n"
            "import gemmlab, gemmlab.distributed as gd\n"
            "gd.require_gpu = lambda: None\n"
            "ok, reason = gd.available(); assert not ok and 'NCCL' in reason, reason\n"
            "try:\n    gd._ready(0)\nexcept RuntimeError as e:\n    print('ERR', e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                         cwd=os.path.dirname(os.path.abspath(__file__)))
    assert out.returncode == 0, out.stderr
    assert "ERR gemmlab.distributed: gemmlab was built without its NCCL extension" in out.stdout


@pytest.mark.parametrize("total, ranks, sizes", [(301, 2, [151, 150]), (10, 4, [3, 3, 2, 2]),
                                                 (8, 2, [4, 4]), (1, 3, [1, 0, 0]),
                                                 (0, 2, [0, 0])])
def test_shard_rule(total, ranks, sizes):
    assert [gd.shard_rows(total, ranks, r) for r in range(ranks)] == sizes
    offsets = [gd.shard_offset(total, ranks, r) for r in range(ranks)]
    assert offsets == [sum(sizes[:r]) for r in range(ranks)]
    assert gd.shard_rows(total, ranks, ranks) == 0 and gd.shard_rows(total, 0, 0) == 0


@pytest.mark.skipif(gd._dist is None, reason="gemmlab._dist is not built (no NCCL)")
def test_shard_rule_matches_cpp():
    for total in range(0, 40):
        for ranks in range(1, 9):
            for r in range(ranks):
                assert gd.shard_rows(total, ranks, r) == gd._dist.shard_rows(total, ranks, r)
                assert gd.shard_offset(total, ranks, r) == gd._dist.shard_offset(total, ranks, r)


AG_ERRORS = [  # (a_shard, b, kwargs, error, match)
    ("x", t(64, 32), {}, TypeError, "a_shard must be a torch tensor"),
    (t(2, 8, 64), t(64, 32), {}, ValueError, "a_shard must be 2-D"),
    (t(8, 64), t(48, 32), {}, ValueError, "inner dimensions differ"),
    (t(8, 64), t(64, 32, dtype=torch.float16), {}, ValueError, "same dtype"),
    (t(8, 64, dtype=torch.float64), t(64, 32, dtype=torch.float64), {}, ValueError,
     "unsupported input dtype"),
    (t(8, 64), t(64, 32), {"bias": t(31)}, ValueError, "bias must be 1-D with n = 32"),
    (t(8, 64), t(64, 32), {"bias": t(32, dtype=torch.float16)}, ValueError, "bias must be"),
    (t(8, 64), t(64, 32), {"activation": "tanh"}, ValueError, "unknown activation"),
    (t(8, 64), t(64, 32), {"out_dtype": torch.float64}, ValueError, "out_dtype must be"),
    (t(8, 64), t(64, 32), {"precision": "tf32"}, ValueError, "does not apply"),
    (t(8, 64), t(64, 32), {"chunks": 65}, ValueError, "chunks must be 0"),
    (t(8, 64), t(64, 32), {"chunks": 1.5}, TypeError, "chunks must be an int"),
    (t(8, 64), t(64, 32), {"sm_margin": -1}, ValueError, "sm_margin must be >= 0"),
    (t(8, 64), t(64, 32), {"kernel": 3}, TypeError, "kernel must be a string"),
    (t(8, 60), t(60, 32), {}, ValueError, "multiple of 16 bytes"),
    (t(8, 6, dtype=torch.float32), t(6, 32, dtype=torch.float32), {}, ValueError,
     "k a multiple of 4 for float32"),
]


@pytest.mark.parametrize("a, b, kwargs, error, match", AG_ERRORS)
def test_all_gather_argument_errors(a, b, kwargs, error, match):
    """Raised before the process group is even looked at (there is none in this process)."""
    with pytest.raises(error, match=match):
        gd.all_gather_matmul(a, b, **kwargs)


RS_ERRORS = [
    (t(8, 64), "w", {}, TypeError, "b_shard must be a torch tensor"),
    (t(8, 64), t(48, 32), {}, ValueError, "inner dimensions differ"),
    (t(8, 64), t(64, 32), {"partial_dtype": torch.float64}, ValueError, "partial_dtype must be"),
    (t(8, 64), t(64, 32), {"partial_dtype": 3}, TypeError, "partial_dtype must be"),
    (t(8, 64), t(64, 6), {}, ValueError, "n must be a multiple of 4 for float32 partials"),
    (t(8, 64), t(64, 4), {"partial_dtype": "bf16"}, ValueError, "multiple of 8 for bfloat16"),
    (t(8, 60), t(60, 32), {}, ValueError, "k_s a multiple of 8 for bfloat16"),
    (t(8, 64), t(64, 32), {"bias": t(8)}, ValueError, "bias must be 1-D with n = 32"),
]


@pytest.mark.parametrize("a, b, kwargs, error, match", RS_ERRORS)
def test_reduce_scatter_argument_errors(a, b, kwargs, error, match):
    with pytest.raises(error, match=match):
        gd.matmul_reduce_scatter(a, b, **kwargs)


@needs_dist
def test_no_process_group():
    assert not torch.distributed.is_initialized()
    with pytest.raises(RuntimeError, match="no default process group"):
        gd.all_gather_matmul(t(8, 64), t(64, 32))
    with pytest.raises(RuntimeError, match="no default process group"):
        gd.matmul_reduce_scatter(t(8, 64), t(64, 32).t().contiguous().t())
    with pytest.raises(RuntimeError, match="no default process group"):
        ColumnParallelLinear(64, 32)


@pytest.fixture
def one_rank_group(tmp_path):
    """A one-rank gloo process group in this process (no GPU, no NCCL)."""
    if not torch.distributed.is_available():
        pytest.skip("this PyTorch build has no torch.distributed")
    torch.distributed.init_process_group("gloo", init_method=f"file://{tmp_path}/pg", rank=0,
                                         world_size=1)
    yield
    torch.distributed.destroy_process_group()


def test_with_a_group_cpu_tensors_and_rows(one_rank_group):
    a, b = t(8, 64, device="cpu"), t(64, 32, device="cpu")
    with pytest.raises(ValueError, match="needs CUDA tensors"):
        gd.all_gather_matmul(a, b, rows=8)
    with pytest.raises(ValueError, match="needs CUDA tensors"):
        gd.matmul_reduce_scatter(a, b)
    with pytest.raises(ValueError, match=r"holds shard_rows\(9, 1, 0\) = 9 rows"):
        gd.all_gather_matmul(a, b, rows=9)
    with pytest.raises(TypeError, match="rows must be None or an int"):
        gd.all_gather_matmul(a, b, rows=8.0)
    with pytest.raises(ValueError, match=r"gathered must be a contiguous \(8, 64\)"):
        gd.all_gather_matmul(a, b, rows=8, gathered=t(8, 32, device="cpu"))


def test_modules_with_a_group(one_rank_group):
    col = ColumnParallelLinear(64, 48, activation="gelu", dtype=torch.bfloat16)
    assert col.weight.shape == (48, 64) and col.bias.shape == (48,)
    assert "activation='gelu'" in repr(col) and "rank=0 of 1" in repr(col)
    row = RowParallelLinear(48, 32, bias=False, partial_dtype="bf16")
    assert row.weight.shape == (32, 48) and row.bias is None
    bound = 1 / 64 ** 0.5
    assert col.weight.abs().max().item() <= bound
    linear = torch.nn.Linear(64, 48)
    col = ColumnParallelLinear.from_linear(linear)
    assert torch.equal(col.weight, linear.weight) and torch.equal(col.bias, linear.bias)
    row = RowParallelLinear.from_linear(torch.nn.Linear(48, 32))
    with pytest.raises(ValueError, match="needs CUDA tensors"):  # devices before gradients
        col(torch.randn(8, 64))
    with pytest.raises(ValueError, match="needs CUDA tensors"):
        row(torch.randn(8, 48))
    with pytest.raises(ValueError, match="unknown activation"):
        ColumnParallelLinear(64, 48, activation="tanh")
    with pytest.raises(ValueError, match="partial_dtype must be"):
        RowParallelLinear(64, 48, partial_dtype="int8")


@pytest.mark.skipif(gemmlab._C.device_count() > 0, reason="this machine has a GPU")
def test_no_gpu_is_a_clear_error():
    with pytest.raises(gemmlab.GemmlabError, match="no CUDA GPU is available") as info:
        gd._ready(0)
    assert info.value.status == "NoDevice"
