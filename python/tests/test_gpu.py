"""GPU tests: results against a float64 torch reference for every dtype and transpose, strided and
non-contiguous inputs, misaligned sizes, batches, alpha/beta/c, errors that leave out untouched,
stream order, foreign arrays, torch.compile, CUDA graphs, autograd, Linear and patch() (16-bit
outputs and the fused bias and activations: test_gpu_epilogue.py)."""
import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed")
import gemmlab  # noqa: E402
import gemmlab.torch as gt  # noqa: E402
from gpu_common import (  # noqa: E402,F401
    ACTIVATIONS, DTYPES, F, FP32_OUT_BOUND, OUT_BOUND, assert_close, kernel_without, operand,
    rand, reference)

pytestmark = pytest.mark.gpu

@pytest.mark.parametrize("name", list(DTYPES))
@pytest.mark.parametrize("ta, tb", [(False, False), (False, True), (True, False), (True, True)])
@pytest.mark.parametrize("m, n, k", [(128, 256, 64), (129, 65, 33)])
def test_dtypes_and_transposes(name, ta, tb, m, n, k):
    dtype, precision, bound = DTYPES[name]
    a, b = operand(m, k, ta, dtype, 1), operand(k, n, tb, dtype, 2)
    y = gemmlab.matmul(a, b, precision=precision)
    assert y.dtype == dtype and y.shape == (m, n)
    assert_close(y, reference(a, b), bound)
    out = torch.full((m, n), float("nan"), device="cuda")
    assert gemmlab.matmul(a, b, out=out, precision=precision) is out
    assert_close(out, reference(a, b), FP32_OUT_BOUND[name])


def test_repeated_geometry_reuses_the_layout_only():
    """Plain calls remember their layout per (shapes, strides, dtypes, scalars): new tensors of
    the same geometry get their own pointers; a transposed view or a padded row stride of the same
    shape, another alpha, or a copied operand (strides op/ld cannot express) is laid out anew."""
    a, b = rand(33, 20, seed=40), rand(20, 17, seed=41)
    for seed in range(3):  # the second and third calls hit the cache
        a, b = rand(33, 20, seed=42 + seed), rand(20, 17, seed=52 + seed)
        out = torch.full((33, 17), float("nan"), device="cuda")
        assert gemmlab.matmul(a, b, out=out) is out
        assert_close(out, reference(a, b), 1e-5)
        assert_close(gemmlab.matmul(a, b, alpha=-0.5), reference(a, b, alpha=-0.5), 1e-5)
    bt = rand(17, 20, seed=60).t()                   # same shape, op(B) = B^T
    assert_close(gemmlab.matmul(a, bt), reference(a, bt), 1e-5)
    ap = rand(33, 29, seed=61)[:, 4:24]              # same shape, row stride 29, offset 4
    assert_close(gemmlab.matmul(ap, b), reference(ap, b), 1e-5)
    ac = rand(33, 40, seed=62)[:, ::2]               # strides (40, 2): copied every call
    for _ in range(2):
        assert_close(gemmlab.matmul(ac, b), reference(ac, b), 1e-5)
    out_t = torch.empty(17, 33, device="cuda").t()   # an out it cannot write in place
    for _ in range(2):
        assert gemmlab.matmul(a, b, out=out_t) is out_t
        assert_close(out_t, reference(a, b), 1e-5)


@pytest.mark.parametrize("name", ["fp32", "bf16"])
def test_misaligned_4097(name):
    dtype, precision, bound = DTYPES[name]
    a, b = rand(4097, 4097, dtype=dtype, seed=3), rand(4097, 4097, dtype=dtype, seed=4)
    assert_close(gemmlab.matmul(a, b.t(), precision=precision), reference(a, b.t()), bound)


def test_float32_out_is_written_in_place():
    a, b = rand(64, 48, dtype=torch.bfloat16), rand(48, 80, dtype=torch.bfloat16, seed=1)
    big = torch.full((64, 100), -7.0, device="cuda")
    out = big[:, 10:90]  # row stride 100: passed as ldc, no copy
    assert gemmlab.matmul(a, b, out=out) is out
    assert_close(out, reference(a, b), 1e-4)
    assert (big[:, :10] == -7).all() and (big[:, 90:] == -7).all()


def test_strided_and_non_contiguous_inputs():
    base = rand(70, 200, seed=5)
    a = base[:, 3:3 + 45]            # row-padded, storage offset of 3 floats (misaligned rows)
    b = rand(90, 130, seed=6)[::2, 7:7 + 90]   # 45 x 90, row stride 260
    assert_close(gemmlab.matmul(a, b), reference(a, b), 1e-5)
    a2 = rand(70, 90, seed=7)[:, ::2]                  # strides (90, 2): copied
    b2 = rand(90, 200, seed=8)[::2, ::3][:, :33]       # strides (400, 3): copied
    assert_close(gemmlab.matmul(a2, b2), reference(a2, b2), 1e-5)
    e = rand(1, 45, seed=9).expand(70, 45)   # zero row stride: copied
    assert_close(gemmlab.matmul(e, b), reference(e, b), 1e-5)
    out_t = torch.empty(90, 70, device="cuda").t()  # a transposed out: computed, then copied
    assert gemmlab.matmul(a, b, out=out_t) is out_t
    assert_close(out_t, reference(a, b), 1e-5)


@pytest.mark.parametrize("name", ["fp32", "bf16"])
def test_batches(name):
    dtype, precision, bound = DTYPES[name]
    a = rand(6, 33, 20, dtype=dtype, seed=10)[::2]      # batch stride of two entries
    b = rand(3, 25, 20, dtype=dtype, seed=11).transpose(1, 2)   # op(B) = B^T per entry
    assert_close(gemmlab.matmul(a, b, precision=precision), reference(a, b), bound)
    w = rand(20, 17, dtype=dtype, seed=12)                  # 2-D: shared by every entry
    assert_close(gemmlab.matmul(a, w, precision=precision), reference(a, w), bound)
    one = rand(1, 33, 20, dtype=dtype, seed=13)             # batch of 1: broadcast
    assert_close(gemmlab.matmul(one, b, precision=precision), reference(one, b), bound)
    out = torch.empty(3, 33, 25, device="cuda")
    c = rand(3, 33, 25, seed=14)
    gemmlab.matmul(a, b, out=out, alpha=0.5, beta=-2.0, c=c, precision=precision)
    assert_close(out, reference(a, b, 0.5, -2.0, c), FP32_OUT_BOUND[name])


def test_alpha_beta_c():
    a, b, c = rand(40, 30, seed=15), rand(30, 50, seed=16), rand(40, 50, seed=17)
    c_before = c.clone()
    y = gemmlab.matmul(a, b, alpha=2.0, beta=0.5, c=c)
    assert_close(y, reference(a, b, 2.0, 0.5, c), 1e-5)
    assert torch.equal(c, c_before), "c was modified"
    out = torch.zeros(40, 50, device="cuda")
    gemmlab.matmul(a, b, out=out, alpha=2.0, beta=0.5, c=c)
    assert_close(out, reference(a, b, 2.0, 0.5, c), 1e-5)
    gemmlab.matmul(a, b, out=c, beta=1.0, c=c)  # in place: c += a @ b
    assert_close(c, reference(a, b, 1.0, 1.0, c_before), 1e-5)


def test_empty_and_k_zero():
    assert gemmlab.matmul(rand(0, 4), rand(4, 3)).shape == (0, 3)
    y = gemmlab.matmul(torch.empty(5, 0, device="cuda"), torch.empty(0, 3, device="cuda"))
    torch.cuda.synchronize()
    assert torch.equal(y, torch.zeros(5, 3, device="cuda"))


def test_errors_leave_out_untouched():
    a, b = rand(64, 64), rand(64, 64, seed=1)
    out = torch.full((64, 64), 123.0, device="cuda")
    with pytest.raises(gemmlab.GemmlabError, match="KernelUnsupported") as info:
        gemmlab.matmul(a, b, out=out, kernel=kernel_without("fp32"))
    assert info.value.status == "KernelUnsupported" and isinstance(info.value, RuntimeError)
    with pytest.raises(gemmlab.GemmlabError, match="UnknownKernel"):
        gemmlab.matmul(a, b, out=out, kernel="no/such_kernel")
    out3 = torch.full((3, 64, 64), 123.0, device="cuda")
    with pytest.raises(gemmlab.GemmlabError, match="KernelUnsupported"):  # batched
        gemmlab.matmul(rand(3, 64, 64), b, out=out3, kernel=kernel_without("fp32"))
    torch.cuda.synchronize()
    assert (out == 123.0).all() and (out3 == 123.0).all()


def test_named_kernel_and_auto_kernel():
    a, b = rand(256, 256, dtype=torch.bfloat16), rand(256, 256, dtype=torch.bfloat16, seed=1)
    names = {k["name"] for k in gemmlab.kernels()}
    chosen = gemmlab.auto_kernel(a, b)
    assert chosen in names
    assert_close(gemmlab.matmul(a, b, kernel=chosen), reference(a, b), 1e-2)
    # the first tensor-core ladder step (the GEMV-class kernels take only m <= 8)
    step = next(k["name"] for k in gemmlab.kernels()
                if "bf16" in k["dtypes"] and k["family"] != "gemv")
    assert_close(gemmlab.matmul(a, b, kernel=step), reference(a, b), 1e-2)
    with pytest.raises(gemmlab.GemmlabError, match="KernelUnsupported"):
        gemmlab.matmul(a, b, kernel="gemv/small_m")


def test_runs_on_torch_current_stream():
    a, b = rand(512, 512), rand(512, 512, seed=1)
    new_a = rand(512, 512, seed=2)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        torch.cuda._sleep(200_000_000)   # ~0.1 s of GPU time before the copy on this stream
        a.copy_(new_a)
        y = gemmlab.matmul(a, b)         # must run after the copy: same stream
    side.synchronize()
    assert_close(y, reference(new_a, b), 1e-5)


class CAIArray:
    """A CuPy-like array: only __cuda_array_interface__ (over a torch tensor's memory)."""

    def __init__(self, t, stream=None):
        self.t = t
        self.__cuda_array_interface__ = dict(t.__cuda_array_interface__, stream=stream)


class DLPackArray:
    """A JAX-like array: only DLPack, shape and a dtype name."""

    def __init__(self, t):
        self.t, self.shape, self.dtype = t, tuple(t.shape), str(t.dtype).replace("torch.", "")

    def __dlpack__(self, **kwargs):
        return self.t.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.t.__dlpack_device__()


def test_foreign_arrays():
    a, b = rand(100, 70, dtype=torch.float16), rand(70, 90, dtype=torch.float16, seed=1)
    assert_close(gemmlab.matmul(CAIArray(a), CAIArray(b)), reference(a, b), 2e-3)
    a16, b16 = a.bfloat16(), b.bfloat16()
    assert_close(gemmlab.matmul(DLPackArray(a16), DLPackArray(b16.t().contiguous().t())),
                 reference(a16, b16), 1e-2)
    out = torch.empty(100, 90, device="cuda")
    assert gemmlab.matmul(CAIArray(a), b, out=CAIArray(out)).t is out
    assert_close(out, reference(a, b), 1e-4)


def test_foreign_array_runs_on_its_stream():
    a, b, new_a = rand(512, 512), rand(512, 512, seed=1), rand(512, 512, seed=2)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        torch.cuda._sleep(200_000_000)
        a.copy_(new_a)
    # torch's current stream is the default one here; the array names `side`
    y = gemmlab.matmul(CAIArray(a, stream=side.cuda_stream), CAIArray(b, stream=side.cuda_stream))
    torch.cuda.synchronize()
    assert_close(y, reference(new_a, b), 1e-5)


@pytest.mark.parametrize("name", ["fp32", "bf16"])
def test_linear_and_patch(name):
    dtype, _, bound = DTYPES[name]
    torch.manual_seed(0)
    ref = torch.nn.Sequential(torch.nn.Linear(768, 384), torch.nn.GELU(),
                              torch.nn.Linear(384, 50257)).cuda().to(dtype)
    x = rand(2, 7, 768, dtype=dtype, seed=3)
    with torch.no_grad():
        expected = ref.double()(x.double())
        ref.to(dtype)
        assert gt.patch(ref, where="all") == ["0", "2"]
        assert_close(ref(x), expected, 5 * bound)


def test_torch_compile_linear():
    torch.manual_seed(0)
    model = torch.nn.Sequential(gt.Linear(256, 384), torch.nn.ReLU(), gt.Linear(384, 1000),
                                gt.Linear(1000, 200, activation="gelu")).cuda()
    x = rand(33, 256, seed=4)
    with torch.no_grad():
        eager = model(x)
        compiled = torch.compile(model, fullgraph=True)(x)
    torch.testing.assert_close(compiled, eager, rtol=1e-6, atol=1e-6)
    assert_close(eager, model.double()(x.double()), 1e-5)


def test_autograd():
    a = rand(3, 40, 30, seed=1).requires_grad_()
    b = rand(30, 20, seed=2).requires_grad_()
    gemmlab.matmul(a, b, alpha=1.5).square().sum().backward()
    a64, b64 = a.detach().double().requires_grad_(), b.detach().double().requires_grad_()
    (1.5 * torch.matmul(a64, b64)).square().sum().backward()
    assert_close(a.grad, a64.grad, 1e-5)
    assert_close(b.grad, b64.grad, 1e-5)


@pytest.mark.parametrize("m, n, k, name", [(4096, 4096, 4096, "bf16"), (1024, 1024, 1024, "fp32")])
def test_cuda_graph_replay(m, n, k, name):
    dtype, precision, bound = DTYPES[name]
    a, b = rand(m, k, dtype=dtype, seed=1), rand(n, k, dtype=dtype, seed=2).t()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        gemmlab.matmul(a, b, precision=precision)   # warm-up outside the capture
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        y = gemmlab.matmul(a, b, precision=precision)
    for seed in (3, 4):   # twice: split-k counters must reset themselves
        a.copy_(rand(m, k, dtype=dtype, seed=seed))
        graph.replay()
        assert_close(y, reference(a, b), bound)


# ---- 16-bit outputs, bias, activations (gemmlab::gemm(GemmDesc)) ----------------------------
