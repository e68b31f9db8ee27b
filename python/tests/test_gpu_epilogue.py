"""GPU tests of the epilogue: 16-bit outputs (in place, strided, accumulated, batched), the fused
bias and activations against their torch references, named kernels with an epilogue, autograd and
Linear with a fused activation, and a CUDA graph of a fused 16-bit call."""
import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed")
import gemmlab  # noqa: E402
import gemmlab.torch as gt  # noqa: E402
from gpu_common import (  # noqa: E402,F401
    ACTIVATIONS, DTYPES, F, FP32_OUT_BOUND, OUT_BOUND, assert_close, kernel_without, operand,
    rand, reference)

pytestmark = pytest.mark.gpu

@pytest.mark.parametrize("name", ["bf16", "fp16"])
@pytest.mark.parametrize("out_dtype", [None, torch.float32, torch.bfloat16, torch.float16])
@pytest.mark.parametrize("m, n, k", [(128, 256, 64), (129, 65, 33)])
def test_16bit_outputs(name, out_dtype, m, n, k):
    dtype = DTYPES[name][0]
    a, b = operand(m, k, False, dtype, 1), operand(k, n, True, dtype, 2)
    y = gemmlab.matmul(a, b, out_dtype=out_dtype)
    expected = dtype if out_dtype is None else out_dtype
    assert y.dtype == expected and y.shape == (m, n)
    assert_close(y, reference(a, b), OUT_BOUND[expected])
    out = torch.full((m, n), float("nan"), device="cuda", dtype=expected)
    assert gemmlab.matmul(a, b, out=out) is out
    assert_close(out, reference(a, b), OUT_BOUND[expected])


def test_out_dtype_names_and_fp32_inputs():
    a, b = rand(50, 40, seed=30), rand(40, 60, seed=31)
    assert gemmlab.matmul(a, b).dtype == torch.float32
    y = gemmlab.matmul(a, b, out_dtype="bfloat16")
    assert y.dtype == torch.bfloat16
    assert_close(y, reference(a, b), 1e-2)
    assert gemmlab.matmul(a, b, out_dtype="fp16").dtype == torch.float16


@pytest.mark.parametrize("name", ["fp32", "tf32", "bf16", "fp16"])
@pytest.mark.parametrize("activation", list(ACTIVATIONS))
@pytest.mark.parametrize("bias_dtype", ["input", "float32", None])
def test_bias_and_activation(name, activation, bias_dtype):
    dtype, precision, bound = DTYPES[name]
    m, n, k = 96, 136, 64
    # entries of size ~1 before the activation, where the activations differ most
    a = (rand(m, k, seed=20) * 0.35).to(dtype)
    b = (rand(n, k, seed=21) * 0.35).to(dtype).t()      # an nn.Linear weight: op(B) = B^T
    bias = None
    if bias_dtype is not None:
        bias = rand(n, seed=22).to(dtype if bias_dtype == "input" else torch.float32)
    y = gemmlab.matmul(a, b, bias=bias, activation=activation, precision=precision)
    assert y.dtype == dtype and y.shape == (m, n)
    z = reference(a, b) if bias is None else reference(a, b) + bias.double()
    assert_close(y, ACTIVATIONS[activation](z), bound)


@pytest.mark.parametrize("activation", ["relu", "gelu", "gelu_tanh", "silu"])
def test_activation_values(activation):
    """D = act(x) exactly where x covers [-8, 8] (k = 1, B = ones): the activation's own accuracy,
    and "gelu" is the erf form (the tanh form differs by up to ~5e-4 here)."""
    x = torch.linspace(-8, 8, 2001, device="cuda").reshape(-1, 1)
    ones = torch.ones(1, 8, device="cuda")
    y = gemmlab.matmul(x, ones, activation=activation)
    torch.cuda.synchronize()
    ref = ACTIVATIONS[activation](x.double()).expand(-1, 8)
    err = (y.double() - ref).abs().max().item()
    assert err <= 4e-6, f"{activation}: max abs error {err:.2e}"
    if activation in ("gelu", "gelu_tanh"):
        other = ACTIVATIONS["gelu_tanh" if activation == "gelu" else "gelu"](x.double())
        assert (y[:, :1].double() - other).abs().max().item() > 1e-4


@pytest.mark.parametrize("name", ["bf16", "fp16"])
def test_batched_broadcast_weight_fused(name):
    """A batch with one weight for every entry (stride 0), the bias and an activation: one call."""
    dtype = DTYPES[name][0]
    x = (rand(8, 33, 64, seed=40) * 0.35).to(dtype)[::2]      # batch stride of two entries
    w = (rand(48, 64, seed=41) * 0.35).to(dtype)
    bias = rand(48, seed=42).to(dtype)
    for activation in ("gelu", "gelu_tanh", "silu", "relu"):
        y = gemmlab.matmul(x, w.t(), bias=bias, activation=activation)
        assert y.shape == (4, 33, 48) and y.dtype == dtype
        z = torch.matmul(x.double(), w.double().t()) + bias.double()
        assert_close(y, ACTIVATIONS[activation](z), DTYPES[name][2])
    one = (rand(1, 48, 64, seed=43) * 0.35).to(dtype)        # a batch of 1 broadcasts too
    y = gemmlab.matmul(x, one.transpose(1, 2), bias=bias.float(), activation="gelu")
    z = torch.matmul(x.double(), one.double().transpose(1, 2)) + bias.double()
    assert_close(y, F.gelu(z), DTYPES[name][2])


def test_16bit_out_in_place_without_fp32_intermediate():
    """A 16-bit result is written by gemmlab itself: out is the returned tensor, and torch allocates
    nothing during the call with out= (and only the 16-bit result without it)."""
    dtype = torch.bfloat16
    a, w = rand(1024, 512, dtype=dtype, seed=50), rand(1024, 512, dtype=dtype, seed=51)
    bias = rand(1024, dtype=dtype, seed=52)
    out = torch.full((1024, 1024), float("nan"), device="cuda", dtype=dtype)
    gemmlab.matmul(a, w.t(), out=out, bias=bias, activation="gelu")   # warm-up
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    assert gemmlab.matmul(a, w.t(), out=out, bias=bias, activation="gelu") is out
    assert torch.cuda.max_memory_allocated() == base, "torch memory was allocated for out="
    assert out.dtype == dtype
    ref = F.gelu(torch.matmul(a.double(), w.double().t()) + bias.double())
    assert_close(out, ref, 1e-2)
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()   # (the fp64 reference above is allocated and freed)
    torch.cuda.reset_peak_memory_stats()
    y = gemmlab.matmul(a, w.t(), bias=bias, activation="gelu")
    peak = torch.cuda.max_memory_allocated() - base
    assert y.dtype == dtype
    assert peak <= y.numel() * y.element_size(), f"{peak} bytes allocated for a 2 MB bf16 result"
    assert_close(y, ref, 1e-2)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_16bit_out_strided_and_accumulated(dtype):
    a, b = rand(64, 48, dtype=dtype, seed=60), rand(48, 80, dtype=dtype, seed=61)
    big = torch.full((64, 100), -7.0, device="cuda", dtype=dtype)
    out = big[:, 10:90]          # row stride 100, offset 10 elements: ldd, no copy
    assert gemmlab.matmul(a, b, out=out, activation="relu") is out
    assert_close(out, F.relu(reference(a, b)), OUT_BOUND[dtype])
    assert (big[:, :10] == -7).all() and (big[:, 90:] == -7).all()
    c = rand(64, 80, dtype=dtype, seed=62)
    c0 = c.clone()
    assert gemmlab.matmul(a, b, out=c, beta=1.0, c=c) is c   # c += a @ b in its own dtype
    assert_close(c, reference(a, b, 1.0, 1.0, c0), OUT_BOUND[dtype])
    y = gemmlab.matmul(a, b, alpha=0.5, beta=-2.0, c=c0.float())   # float32 c, 16-bit result
    assert y.dtype == dtype
    assert_close(y, reference(a, b, 0.5, -2.0, c0), OUT_BOUND[dtype])
    out_t = torch.empty(80, 64, device="cuda", dtype=dtype).t()   # no unit column stride: copied
    assert gemmlab.matmul(a, b, out=out_t) is out_t
    assert_close(out_t, reference(a, b), OUT_BOUND[dtype])


def test_batched_out_and_c_16bit():
    dtype = torch.bfloat16
    a, b = rand(3, 40, 24, dtype=dtype, seed=70), rand(24, 56, dtype=dtype, seed=71)
    out = torch.empty(3, 40, 56, device="cuda", dtype=dtype)
    c = rand(3, 40, 56, seed=72).to(dtype)
    bias = rand(56, seed=73)
    assert gemmlab.matmul(a, b, out=out, beta=0.5, c=c, bias=bias, activation="silu") is out
    z = reference(a, b, 1.0, 0.5, c) + bias.double()
    assert_close(out, F.silu(z), 1e-2)
    shared_c = rand(40, 56, seed=74).expand(3, 40, 56)   # batch stride 0: read as a broadcast
    y = gemmlab.matmul(a, b, beta=1.0, c=shared_c, out_dtype=torch.float32)
    assert_close(y, reference(a, b, 1.0, 1.0, shared_c), 1e-4)


def test_named_kernel_with_epilogue():
    """The library checks a named kernel against the whole call; a dtype it lacks is an error
    that leaves out untouched."""
    a, b = rand(64, 64, dtype=torch.bfloat16), rand(64, 64, dtype=torch.bfloat16, seed=1)
    out = torch.full((3, 64, 64), 5.0, device="cuda", dtype=torch.bfloat16)
    with pytest.raises(gemmlab.GemmlabError, match="KernelUnsupported"):
        gemmlab.matmul(a.expand(3, 64, 64), b, out=out, bias=b[0], activation="relu",
                       kernel=kernel_without("bf16"))
    torch.cuda.synchronize()
    assert (out == 5.0).all()
    name = gemmlab.auto_kernel(a, b, bias=b[0], activation="gelu")
    assert name in {k["name"] for k in gemmlab.kernels()}
    y = gemmlab.matmul(a, b, bias=b[0], activation="gelu", kernel=name)
    assert_close(y, F.gelu(reference(a, b) + b[0].double()), 1e-2)


def test_autograd_bias_activation():
    a = (rand(3, 40, 30, seed=80) * 0.5).requires_grad_()
    w = (rand(20, 30, seed=81) * 0.5).requires_grad_()
    bias = rand(20, seed=82).requires_grad_()
    gemmlab.matmul(a, w.t(), bias=bias, activation="gelu", alpha=1.5).square().sum().backward()
    a64, w64, b64 = (t.detach().double().requires_grad_() for t in (a, w, bias))
    F.gelu(1.5 * torch.matmul(a64, w64.t()) + b64).square().sum().backward()
    for got, ref in ((a.grad, a64.grad), (w.grad, w64.grad), (bias.grad, b64.grad)):
        assert_close(got, ref, 1e-4)


@pytest.mark.parametrize("name", ["fp32", "bf16"])
def test_linear_fused_activation(name):
    dtype, _, bound = DTYPES[name]
    torch.manual_seed(0)
    lin = gt.Linear(768, 384, activation="gelu_tanh").cuda().to(dtype)
    x = rand(2, 7, 768, dtype=dtype, seed=90)
    with torch.no_grad():
        y = lin(x)
    assert y.dtype == dtype and y.shape == (2, 7, 384)
    ref = F.gelu(F.linear(x.double(), lin.weight.double(), lin.bias.double()), approximate="tanh")
    assert_close(y, ref, 5 * bound)


def test_cuda_graph_fused_16bit():
    dtype = torch.bfloat16
    x, w = rand(512, 256, dtype=dtype, seed=91), rand(384, 256, dtype=dtype, seed=92)
    bias = rand(384, dtype=dtype, seed=93)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        gemmlab.matmul(x, w.t(), bias=bias, activation="silu")
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        y = gemmlab.matmul(x, w.t(), bias=bias, activation="silu")
    x.copy_(rand(512, 256, dtype=dtype, seed=94))
    graph.replay()
    assert y.dtype == dtype
    assert_close(y, F.silu(torch.matmul(x.double(), w.double().t()) + bias.double()), 1e-2)
