"""What the GPU tests share (test_gpu.py, test_gpu_epilogue.py): the dtypes and their error bounds,
the activations' torch references, random CUDA tensors, the float64 reference and the check."""
import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed")
import gemmlab  # noqa: E402
import gemmlab.torch as gt  # noqa: E402

# dtype name -> (torch dtype, precision, bound on max|C - ref| / max|ref| for the default output)
DTYPES = {
    "fp32": (torch.float32, None, 1e-5),
    "tf32": (torch.float32, "tf32", 5e-3),
    "bf16": (torch.bfloat16, None, 1e-2),   # includes rounding the result to bf16 (2^-9)
    "fp16": (torch.float16, None, 2e-3),    # includes rounding the result to fp16 (2^-12)
}
FP32_OUT_BOUND = {"fp32": 1e-5, "tf32": 5e-3, "bf16": 1e-4, "fp16": 1e-4}
# Bound for a given output dtype of 16-bit inputs: the result's rounding dominates.
OUT_BOUND = {torch.float32: 1e-4, torch.bfloat16: 1e-2, torch.float16: 2e-3}
F = torch.nn.functional
ACTIVATIONS = {
    None: lambda z: z,
    "relu": F.relu,
    "gelu": F.gelu,                                            # approximate="none": erf
    "gelu_tanh": lambda z: F.gelu(z, approximate="tanh"),
    "silu": F.silu,
}


def rand(*shape, dtype=torch.float32, seed=0):
    g = torch.Generator(device="cuda").manual_seed(seed)
    return torch.randn(*shape, device="cuda", generator=g).to(dtype)


def reference(a, b, alpha=1.0, beta=0.0, c=None):
    ref = alpha * torch.matmul(a.double(), b.double())
    return ref if c is None else ref + beta * c.double()


def assert_close(got, ref, bound):
    torch.cuda.synchronize()
    err = ((got.double() - ref).abs().max() / ref.abs().max().clamp_min(1e-30)).item()
    assert err <= bound, f"relative error {err:.2e} > {bound:.0e}"


def operand(rows, cols, transposed, dtype, seed):
    """A rows x cols operand stored as itself or as the transpose of a cols x rows tensor."""
    if transposed:
        return rand(cols, rows, dtype=dtype, seed=seed).t()
    return rand(rows, cols, dtype=dtype, seed=seed)


def kernel_without(precision):
    """A registered kernel that does not take this input precision (for KernelUnsupported tests)."""
    return next(k["name"] for k in gemmlab.kernels() if precision not in k["dtypes"])
