"""PyTorch integration: the torch ops ``gemmlab::matmul`` / ``gemmlab::matmul_out`` (with fake
implementations and autograd, so torch.compile traces them as single ops and CUDA graphs capture
them), ``Linear`` (a drop-in nn.Linear with the bias, and optionally an activation, fused into
the GEMM) and ``patch`` (swap a model's nn.Linear layers); ``ColumnParallelLinear`` and
``RowParallelLinear`` (tensor parallel over NCCL, gemmlab.distributed)."""
from typing import List, Optional

import torch

from . import _checks, _matmul
from ._matmul import dtype_name, matmul, torch_matmul
from ._parallel import ColumnParallelLinear, RowParallelLinear  # noqa: F401

_SUPPORTED = (torch.float32, torch.bfloat16, torch.float16)


# ---- the ops --------------------------------------------------------------------------------

@torch.library.custom_op("gemmlab::matmul", mutates_args=())
def _matmul_op(a: torch.Tensor, b: torch.Tensor, c: Optional[torch.Tensor],
               bias: Optional[torch.Tensor], alpha: float, beta: float, activation: Optional[str],
               out_dtype: Optional[torch.dtype], precision: Optional[str], kernel: str) -> torch.Tensor:
    return torch_matmul(a, b, None, alpha, beta, c, precision, kernel, bias, activation, out_dtype)


@_matmul_op.register_fake
def _matmul_fake(a, b, c, bias, alpha, beta, activation, out_dtype, precision, kernel):
    shape, dtype = _result(a, b, None, c, bias, beta, activation, out_dtype, precision)
    return a.new_empty(shape, dtype=_TORCH_DTYPES[dtype])


@torch.library.custom_op("gemmlab::matmul_out", mutates_args=("out",))
def _matmul_out_op(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor, c: Optional[torch.Tensor],
                   bias: Optional[torch.Tensor], alpha: float, beta: float,
                   activation: Optional[str], precision: Optional[str], kernel: str) -> None:
    torch_matmul(a, b, out, alpha, beta, c, precision, kernel, bias, activation)


@_matmul_out_op.register_fake
def _matmul_out_fake(a, b, out, c, bias, alpha, beta, activation, precision, kernel):
    _result(a, b, out, c, bias, beta, activation, None, precision)


_TORCH_DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


def _result(a, b, out, c, bias, beta, activation, out_dtype, precision):
    """Checks as the eager call does (ValueError, TypeError); the result's shape and dtype name."""
    spec = lambda t: None if t is None else (t.shape, dtype_name(t.dtype))  # noqa: E731
    checked = _checks.check_problem(a.shape, dtype_name(a.dtype), b.shape, dtype_name(b.dtype),
                                    precision, spec(out), spec(c) if beta != 0 else None, beta,
                                    spec(bias), activation, _checks.dtype_arg(out_dtype))
    return checked[5], checked[6]


def _setup_context(ctx, inputs, output):
    a, b, c, bias, alpha, beta, activation, out_dtype, precision, kernel = inputs
    ctx.save_for_backward(a, b, c if activation is not None else None, bias)
    ctx.alpha, ctx.beta, ctx.activation, ctx.precision = alpha, beta, activation, precision
    ctx.c_dtype = None if c is None else c.dtype


# activation= -> its torch function (the derivative of the fused activation, through autograd).
_ACTIVATIONS = {
    "relu": torch.nn.functional.relu,
    "gelu": torch.nn.functional.gelu,
    "gelu_erf": torch.nn.functional.gelu,
    "gelu_tanh": lambda z: torch.nn.functional.gelu(z, approximate="tanh"),
    "silu": torch.nn.functional.silu,
}


def _backward(ctx, grad):
    """With z = alpha op(a) op(b) + beta c + bias and y = act(z): d(z) = act'(z) grad (z recomputed
    in float32 by gemmlab, act' by torch's autograd), d(a) = alpha d(z) op(b)^T, d(b) = alpha a^T
    d(z), d(c) = beta d(z), d(bias) = d(z) summed over rows and batch entries; the products by
    gemmlab (kernel "auto", the forward's precision); a 2-D operand of a batched product gets the
    batch's sum."""
    a, b, c, bias = ctx.saved_tensors
    needs_a, needs_b, needs_c, needs_bias = ctx.needs_input_grad[:4]
    grad_z = grad
    if ctx.activation is not None:
        z = matmul(a, b, bias=bias, alpha=ctx.alpha, beta=ctx.beta, c=c, out_dtype=torch.float32,
                   precision=ctx.precision)
        with torch.enable_grad():
            z.requires_grad_()
            (grad_z,) = torch.autograd.grad(_ACTIVATIONS[ctx.activation](z), z, grad.float())
    grad_a = grad_b = grad_c = grad_bias = None
    if needs_a or needs_b:
        g = grad_z.to(a.dtype)
        if needs_a:
            grad_a = _sum_to(matmul(g, b.transpose(-1, -2), alpha=ctx.alpha, precision=ctx.precision), a)
        if needs_b:
            grad_b = _sum_to(matmul(a.transpose(-1, -2), g, alpha=ctx.alpha, precision=ctx.precision), b)
    if needs_c:
        grad_c = (grad_z * ctx.beta).to(ctx.c_dtype)
    if needs_bias:
        grad_bias = grad_z.reshape(-1, grad_z.shape[-1]).sum(0, dtype=torch.float32).to(bias.dtype)
    return grad_a, grad_b, grad_c, grad_bias, None, None, None, None, None, None


def _sum_to(grad, like):
    if grad.dim() > like.dim():
        return grad.sum(0)
    if like.dim() == 3 and like.shape[0] == 1 and grad.shape[0] > 1:
        return grad.sum(0, keepdim=True)
    return grad


_matmul_op.register_autograd(_backward, setup_context=_setup_context)


def call_op(a, b, out, c, bias, alpha, beta, activation, out_dtype, precision, kernel):
    """gemmlab.matmul through the torch ops (under torch.compile, or when autograd records)."""
    _checks.activation_code(activation)  # TypeError / ValueError here, not from the op's schema
    if out_dtype is not None and not isinstance(out_dtype, torch.dtype):
        out_dtype = _TORCH_DTYPES[_checks.output_dtype(out_dtype, None)]
    if out is None:
        return torch.ops.gemmlab.matmul(a, b, c, bias, alpha, beta, activation, out_dtype,
                                        precision, kernel)
    if torch.is_grad_enabled() and (a.requires_grad or b.requires_grad or
                                    (c is not None and c.requires_grad) or
                                    (bias is not None and bias.requires_grad)):
        raise RuntimeError("gemmlab.matmul: out= does not support automatic differentiation "
                           "(as in torch); call it without out")
    if out_dtype is not None:  # the op has no out_dtype: out's dtype is the result's
        _result(a, b, out, c, bias, beta, activation, out_dtype, precision)
    torch.ops.gemmlab.matmul_out(a, b, out, c, bias, alpha, beta, activation, precision, kernel)
    return out


_matmul.call_torch_op = call_op


@torch.compiler.assume_constant_result
def _tf32_allowed():
    return torch.backends.cuda.matmul.allow_tf32


# ---- modules ----------------------------------------------------------------------------------

class Linear(torch.nn.Linear):
    """nn.Linear computing ``act(x @ weight^T + bias)`` with gemmlab in one call: same parameters
    (weight out x in, stored N x K, passed as op(B) = B^T without a copy), same state_dict, same
    initialization; the bias and the optional activation are fused into the GEMM's epilogue
    (gemmlab.matmul's bias= and activation=), so neither costs an extra pass.

    activation: None (a plain nn.Linear), "relu", "gelu" (erf, torch's default), "gelu_tanh" or
    "silu"; e.g. ``Linear(768, 3072, activation="gelu")`` replaces ``nn.Linear`` + ``nn.GELU()``.
    The result has x's dtype. float32 runs "tf32" when ``torch.backends.cuda.matmul.allow_tf32``
    is True (as nn.Linear does), else exact FP32. Inputs gemmlab does not take (CPU tensors, other
    dtypes, x and weight of different dtypes, a bias neither float32 nor x's dtype) fall back to
    torch.nn.functional.linear and the torch activation. Leading dimensions of x are flattened
    (``x.reshape(-1, in_features)``, a copy only where reshape needs one). Autograd and
    torch.compile work (the torch op gemmlab::matmul)."""

    activation = None  # also for layers that patch() switched to this class

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None,
                 activation=None):
        _checks.activation_code(activation)
        super().__init__(in_features, out_features, bias=bias, device=device, dtype=dtype)
        self.activation = activation

    def extra_repr(self):
        text = super().extra_repr()
        return text if self.activation is None else f"{text}, activation={self.activation!r}"

    def forward(self, x):
        w, bias, activation = self.weight, self.bias, self.activation
        if not (x.is_cuda and w.is_cuda and x.dtype == w.dtype and x.dtype in _SUPPORTED and
                (bias is None or (bias.is_cuda and bias.dtype in (x.dtype, torch.float32)))):
            y = torch.nn.functional.linear(x, w, bias)
            return y if activation is None else _ACTIVATIONS[activation](y)
        precision = None
        if x.dtype == torch.float32 and _tf32_allowed():
            precision = "tf32"
        y = matmul(x.reshape(-1, self.in_features), w.t(), bias=bias, activation=activation,
                   precision=precision)
        return y.reshape(*x.shape[:-1], self.out_features)


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
