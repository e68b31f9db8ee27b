"""gemmlab: GEMM kernels for NVIDIA GPUs (FP32 on CUDA cores; TF32, BF16, FP16 on tensor cores).

    import torch, gemmlab
    a = torch.randn(4097, 4097, device="cuda", dtype=torch.bfloat16)
    y = gemmlab.matmul(a, a.t())          # bf16 result, fp32 accumulation
    gemmlab.auto_kernel(a, a.t())         # which registry kernel that runs
    bias = torch.zeros(4097, device="cuda", dtype=torch.bfloat16)
    h = gemmlab.matmul(a, a.t(), bias=bias, activation="gelu")   # gelu(a @ a.t() + bias), one call

matmul, auto_kernel, kernels, GemmlabError; gemmlab.torch (when PyTorch is installed): the torch
op gemmlab::matmul, Linear and patch(); python -m gemmlab.bench: timings against torch.matmul.
"""
from . import _C
from ._errors import GemmlabError
from ._matmul import auto_kernel, matmul

__version__ = _C.__version__
__all__ = ["matmul", "auto_kernel", "kernels", "GemmlabError", "__version__"]


def kernels():
    """The kernel registry, in ladder order: a list of dicts with name, step, family, seed,
    summary, dtypes (precision names), min_cc (e.g. 90) and auto_priority (0: never picked by
    "auto"). Names are what matmul(..., kernel=) takes."""
    return _C.kernels()


try:  # registers the torch op gemmlab::matmul (torch.compile, CUDA graphs) when torch is there
    import torch as _torch  # noqa: F401
except ImportError:
    pass
else:
    from . import torch  # noqa: F401  (gemmlab.torch)
