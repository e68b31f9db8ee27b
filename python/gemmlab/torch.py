"""PyTorch integration: the torch ops ``gemmlab::matmul`` / ``gemmlab::matmul_out`` (with fake
implementations and autograd, so torch.compile traces them as single ops and CUDA graphs capture
them), ``Linear`` (a drop-in nn.Linear) and ``patch`` (swap a model's nn.Linear layers)."""
from typing import List, Optional

import torch

from . import _checks, _matmul
from ._matmul import dtype_name, matmul, torch_matmul

_SUPPORTED = (torch.float32, torch.bfloat16, torch.float16)


# ---- the ops --------------------------------------------------------------------------------

@torch.library.custom_op("gemmlab::matmul", mutates_args=())
def _matmul_op(a: torch.Tensor, b: torch.Tensor, c: Optional[torch.Tensor], alpha: float,
               beta: float, precision: Optional[str], kernel: str) -> torch.Tensor:
    return torch_matmul(a, b, None, alpha, beta, c, precision, kernel)


@_matmul_op.register_fake
def _matmul_fake(a, b, c, alpha, beta, precision, kernel):
    return a.new_empty(_result_shape(a, b, None, c, beta, precision))


@torch.library.custom_op("gemmlab::matmul_out", mutates_args=("out",))
def _matmul_out_op(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor, c: Optional[torch.Tensor],
                   alpha: float, beta: float, precision: Optional[str], kernel: str) -> None:
    torch_matmul(a, b, out, alpha, beta, c, precision, kernel)


@_matmul_out_op.register_fake
def _matmul_out_fake(a, b, out, c, alpha, beta, precision, kernel):
    _result_shape(a, b, out, c, beta, precision)


def _result_shape(a, b, out, c, beta, precision):
    """Checks as the eager call does (ValueError) and returns the result's shape."""
    spec = lambda t: None if t is None else (t.shape, dtype_name(t.dtype))  # noqa: E731
    return _checks.check_problem(a.shape, dtype_name(a.dtype), b.shape, dtype_name(b.dtype),
                                 precision, spec(out), spec(c), beta)[-1]


def _setup_context(ctx, inputs, output):
    a, b, c, alpha, beta, precision, kernel = inputs
    ctx.save_for_backward(a, b)
    ctx.alpha, ctx.beta, ctx.precision = alpha, beta, precision


def _backward(ctx, grad):
    """d(a) = alpha grad op(b)^T, d(b) = alpha a^T grad, d(c) = beta grad; by gemmlab (kernel
    "auto", the forward's precision); a 2-D operand of a batched product gets the batch's sum."""
    a, b = ctx.saved_tensors
    grad_a = grad_b = grad_c = None
    if ctx.needs_input_grad[0]:
        grad_a = _sum_to(matmul(grad, b.transpose(-1, -2), alpha=ctx.alpha, precision=ctx.precision), a)
    if ctx.needs_input_grad[1]:
        grad_b = _sum_to(matmul(a.transpose(-1, -2), grad, alpha=ctx.alpha, precision=ctx.precision), b)
    if ctx.needs_input_grad[2]:
        grad_c = (grad * ctx.beta).float()
    return grad_a, grad_b, grad_c, None, None, None, None


def _sum_to(grad, like):
    if grad.dim() > like.dim():
        return grad.sum(0)
    if like.dim() == 3 and like.shape[0] == 1 and grad.shape[0] > 1:
        return grad.sum(0, keepdim=True)
    return grad


_matmul_op.register_autograd(_backward, setup_context=_setup_context)


def call_op(a, b, out, c, alpha, beta, precision, kernel):
    """gemmlab.matmul through the torch ops (under torch.compile, or when autograd records)."""
    if out is None:
        return torch.ops.gemmlab.matmul(a, b, c, alpha, beta, precision, kernel)
    if torch.is_grad_enabled() and (a.requires_grad or b.requires_grad or
                                    (c is not None and c.requires_grad)):
        raise RuntimeError("gemmlab.matmul: out= does not support automatic differentiation "
                           "(as in torch); call it without out")
    torch.ops.gemmlab.matmul_out(a, b, out, c, alpha, beta, precision, kernel)
    return out


_matmul.call_torch_op = call_op


@torch.compiler.assume_constant_result
def _tf32_allowed():
    return torch.backends.cuda.matmul.allow_tf32


# ---- modules ----------------------------------------------------------------------------------

class Linear(torch.nn.Linear):
    """nn.Linear computing ``x @ weight^T`` with gemmlab: same parameters (weight out x in, stored
    N x K, passed as op(B) = B^T without a copy), same state_dict, same initialization.

    The bias is added by torch after the product (one extra elementwise pass) until gemmlab's
    extended epilogue API lands. float32 runs "tf32" when ``torch.backends.cuda.matmul.allow_tf32``
    is True (as nn.Linear does), else exact FP32. Inputs gemmlab does not take (CPU tensors, other
    dtypes, x and weight of different dtypes) fall back to torch.nn.functional.linear. Leading
    dimensions of x are flattened (``x.reshape(-1, in_features)``, a copy only where reshape needs
    one). Autograd and torch.compile work (the torch op gemmlab::matmul)."""

    def forward(self, x):
        w = self.weight
        if not (x.is_cuda and w.is_cuda and x.dtype == w.dtype and x.dtype in _SUPPORTED):
            return torch.nn.functional.linear(x, w, self.bias)
        precision = None
        if x.dtype == torch.float32 and _tf32_allowed():
            precision = "tf32"
        y = matmul(x.reshape(-1, self.in_features), w.t(), precision=precision)
        y = y.reshape(*x.shape[:-1], self.out_features)
        return y if self.bias is None else y + self.bias


def slow_for_cublas(linear):
    """The "auto" rule of patch(): True when a row of x (in_features) or of y (out_features) is
    not a multiple of 16 bytes in the weight's dtype (e.g. a vocabulary of 50257, bf16
    in_features 4097). cuBLAS falls back to slow kernels there (4097^3 bf16: gemmlab 3.6x faster
    on an H100); on aligned rows it is as fast as gemmlab or faster, so those stay."""
    size = linear.weight.element_size()
    return (linear.in_features * size) % 16 != 0 or (linear.out_features * size) % 16 != 0


def patch(model, where="auto") -> List[str]:
    """Make model's nn.Linear layers gemmlab Linear layers, in place, and return their names
    (from model.named_modules(); "" is the model itself).

    where="auto": only the layers slow_for_cublas() picks (by the weight's dtype at patch time:
    patch after .to(dtype)); where="all": every nn.Linear. Exactly nn.Linear only (subclasses
    such as quantized layers are left alone). Each layer's class is switched to Linear: its
    parameters, buffers, hooks and state_dict stay what they were, nothing is copied."""
    if where not in ("auto", "all"):
        raise ValueError(f"where must be 'auto' or 'all'; got {where!r}")
    swapped = []
    for name, module in model.named_modules():
        if type(module) is torch.nn.Linear and (where == "all" or slow_for_cublas(module)):
            module.__class__ = Linear
            swapped.append(name)
    return swapped
