"""gemmlab.matmul and gemmlab.auto_kernel: torch tensors on the lean path (raw pointers, strides
and torch's current stream passed as ints to gemmlab._C), everything else through _foreign."""
from . import _C, _checks
from ._errors import raise_status

try:
    import torch as _torch
except ImportError:  # gemmlab works on DLPack / __cuda_array_interface__ objects only with torch
    _torch = None

# Set by gemmlab.torch: routes a call through the torch ops (torch.compile, autograd).
call_torch_op = None

if _torch is not None:
    _PLAIN_TENSORS = (_torch.Tensor, _torch.nn.Parameter)
    _DTYPE_NAMES = {_torch.float32: "float32", _torch.bfloat16: "bfloat16", _torch.float16: "float16"}
    _TORCH_DTYPES = {name: dtype for dtype, name in _DTYPE_NAMES.items()}
    _is_compiling = _torch.compiler.is_compiling
    _get_raw_stream = getattr(_torch._C, "_cuda_getCurrentRawStream", None) or (
        lambda device: _torch.cuda.current_stream(device).cuda_stream)


def dtype_name(dtype):
    """'float32', 'bfloat16', ... for a torch dtype."""
    return _DTYPE_NAMES.get(dtype) or str(dtype).replace("torch.", "")


def matmul(a, b, *, out=None, bias=None, activation=None, out_dtype=None, alpha=1.0, beta=0.0,
           c=None, precision=None, kernel="auto"):
    """Matrix product on the GPU with a fused epilogue, in one gemmlab call:

        result = act(alpha * a @ b + beta * c + bias)

    (``torch.addmm`` plus a bias and an activation; cuBLASLt's epilogue order.)

    a: (m, k) or (batch, m, k); b: (k, n) or (batch, k, n) (a 2-D operand is shared by every
    batch entry, so is a batch of 1). Inputs are torch tensors or any CUDA array exposing DLPack or
    ``__cuda_array_interface__`` (CuPy, JAX); both of the same dtype: float32, bfloat16 or float16.
    Non-torch arrays are checked from their protocol alone, then need PyTorch installed: they are
    wrapped as torch tensors without copies, and the result comes back as a CuPy / JAX array
    (through DLPack) for CuPy / JAX inputs, else as a torch tensor.

    precision: None follows the dtype (float32 -> exact FP32 on CUDA cores, bfloat16 -> "bf16",
    float16 -> "fp16"); "tf32" runs float32 inputs on tensor cores (what torch does when
    ``torch.backends.cuda.matmul.allow_tf32`` is True; gemmlab.matmul does not read that flag,
    gemmlab.torch.Linear does). kernel: "auto" or a name from ``gemmlab.kernels()``. gemmlab
    always accumulates in float32.

    out_dtype: the result's dtype, float32, bfloat16 or float16 (a torch dtype or its name). None:
    the input dtype (like torch.matmul: bfloat16 in, bfloat16 out; float32 in, float32 out).
    gemmlab writes it directly (rounded to nearest even from the float32 accumulator): no float32
    intermediate, no cast afterwards. out: a tensor of the result's shape ((m, n) / (batch, m, n))
    and of any of those dtypes, written in place and returned; its dtype is the result's (an
    out_dtype that says otherwise is a ValueError). ``out`` is written directly when its rows have
    unit column stride and its batch entries do not overlap; otherwise the result goes to a new
    tensor that is then copied into ``out``.

    bias: None or a 1-D tensor of n values (one per column: ``x @ w.t() + bias`` as in nn.Linear),
    float32 or the input dtype, added for every row and batch entry. activation: None, "relu",
    "gelu" (the erf form, torch.nn.functional.gelu's default), "gelu_tanh"
    (``gelu(approximate="tanh")``) or "silu", applied last, in float32, before the rounding.

    beta, c: c (the result's shape; float32, bfloat16 or float16, its own dtype) is required when
    beta != 0 and is not read when beta == 0. ``c=out`` accumulates in place; a ``c`` that only
    overlaps ``out`` is copied first. c itself is never modified unless it is ``out``.

    No copies of a and b where gemmlab's op/ld can express them: a transposed view (``w.t()``) runs
    as op = T, a row-padded or sliced tensor passes its row stride as ld, a 3-D batch its batch
    stride (0 for a shared operand). A matrix with neither stride 1 (e.g. ``x[:, ::2]``), or zero
    strides from ``expand``, is copied to a contiguous tensor first; foreign arrays with negative
    strides are copied by their own library (``.copy()``).

    Batches run as one gemmlab call for the whole batch. Streams: torch inputs run on
    ``torch.cuda.current_stream()``; foreign inputs on the stream their
    ``__cuda_array_interface__`` names (other operands' streams are waited on), else on torch's
    current stream, which DLPack producers are asked to sync to. The call is asynchronous and
    deterministic; it can be captured in a CUDA graph and compiled by torch.compile (through the
    torch ops ``gemmlab::matmul`` / ``gemmlab::matmul_out``), and autograd differentiates it
    (a, b, c and bias; an activation's derivative from a recomputed float32 pre-activation).

    Errors: ValueError for shapes, dtypes and argument values, TypeError for unsupported objects
    and argument types, GemmlabError (a RuntimeError) with gemmlab's status name and message for
    the rest, including no GPU. Nothing is written to ``out`` when the call fails.
    """
    if _torch is not None and isinstance(a, _torch.Tensor) and isinstance(b, _torch.Tensor):
        if _needs_torch_op(a, b, c, bias):
            return call_torch_op(a, b, out, c, bias, alpha, beta, activation, out_dtype, precision,
                                 kernel)
        return torch_matmul(a, b, out, alpha, beta, c, precision, kernel, bias, activation,
                            out_dtype)
    from . import _foreign
    return _foreign.matmul(a, b, out, alpha, beta, c, precision, kernel, bias, activation,
                           out_dtype)


def _needs_torch_op(a, b, c, bias):
    """Under torch.compile tracing, for tensor subclasses (fake, functional tensors of a trace),
    or when autograd must record the call."""
    if _is_compiling() or type(a) not in _PLAIN_TENSORS or type(b) not in _PLAIN_TENSORS or (
            bias is not None and type(bias) not in _PLAIN_TENSORS):
        return True
    return _torch.is_grad_enabled() and (
        a.requires_grad or b.requires_grad or (c is not None and c.requires_grad) or
        (bias is not None and bias.requires_grad))


def torch_matmul(a, b, out, alpha, beta, c, precision, kernel, bias=None, activation=None,
                 out_dtype=None):
    """The eager implementation on torch tensors (also the torch ops' implementation)."""
    p = _plan(a, b, out, alpha, beta, c, precision, bias, activation, out_dtype)
    status = _C.gemm(*p.args, kernel, _get_raw_stream(p.device), p.device, *p.batch_args)
    if status:
        raise_status(status)
    d = p.d
    if out is None or d is out:
        return d
    return out.copy_(d)


def auto_kernel(a, b, *, out=None, bias=None, activation=None, out_dtype=None, alpha=1.0,
                beta=0.0, c=None, precision=None):
    """The registry name of the kernel ``matmul(a, b, ...)`` with these arguments would run
    (kernel="auto", on the current GPU)."""
    if not (_torch is not None and isinstance(a, _torch.Tensor) and isinstance(b, _torch.Tensor)):
        from . import _foreign
        a, b, out, c, bias = _foreign.as_torch_operands(a, b, out, c, bias)
    p = _plan(a, b, out, alpha, beta, c, precision, bias, activation, out_dtype)
    name = _C.auto_kernel_name(*p.args, p.device, *p.batch_args)
    if name is None:
        raise_status()
    return name


class _Plan:
    """One validated call: args (the arguments of _C.gemm from op_a to precision), batch_args
    (batch, stride_a, stride_b, stride_c, stride_d), the device index and d, the tensor gemmlab
    writes (out itself, or a new tensor)."""
    __slots__ = ("args", "batch_args", "device", "d")

    def __init__(self, args, batch_args, device, d):
        self.args, self.batch_args, self.device, self.d = args, batch_args, device, d


def _plan(a, b, out, alpha, beta, c, precision, bias, activation, out_dtype):
    """Checks everything that is cheap to check and lays the call out. Reads each tensor
    attribute once: this is the per-call overhead."""
    if beta == 0:
        c = None
    dev = a.get_device()
    if dev < 0 or b.get_device() != dev or (out is not None and out.get_device() != dev) or (
            c is not None and c.get_device() != dev) or (
            bias is not None and bias.get_device() != dev):
        _device_error(a, b, out, c, bias)
    if c is None and bias is None:
        # Plain calls (no C, no bias) repeat the same geometry: their layout is remembered per
        # (shapes, strides, dtypes, scalars), which leaves the pointers (measured on a CPU:
        # _plan 4.5 -> 2.5 us per call).
        key = (a.shape, a.stride(), a.dtype, b.shape, b.stride(), b.dtype,
               None if out is None else (out.shape, out.stride(), out.dtype), alpha, beta,
               precision, activation, out_dtype)
        try:
            hit = _LAYOUTS.get(key)
        except TypeError:  # an unhashable argument: the full path says what is wrong
            key = hit = None
        if hit is not None:
            head, lda, ldb, tail, batch_args, shape, dtype = hit
            d = out if out is not None else _torch.empty(shape, dtype=dtype, device=a.device)
            return _Plan(head + (a.data_ptr(), lda, b.data_ptr(), ldb, beta, 0, 0, 0, d.data_ptr())
                         + tail, batch_args, dev, d)
    else:
        key = None
    a_dtype = _DTYPE_NAMES.get(a.dtype) or dtype_name(a.dtype)
    if out_dtype is not None:
        out_dtype = _checks.dtype_arg(out_dtype)
    batch, m, n, k, code, shape, d_dtype, act = _checks.check_problem_cached(
        a.shape, a_dtype, b.shape, dtype_name(b.dtype), precision,
        None if out is None else (out.shape, dtype_name(out.dtype)),
        None if c is None else (c.shape, dtype_name(c.dtype)), beta,
        None if bias is None else (bias.shape, dtype_name(bias.dtype)), activation, out_dtype)
    a_in, b_in = a, b
    op_a, lda, a, sa = _operand(a, m, k)
    op_b, ldb, b, sb = _operand(b, k, n)
    d, ldd, sd = _destination(out, shape, d_dtype, a)
    d_type = _checks.DTYPE_CODES[d_dtype]
    c_ptr = ldc = sc = c_type = 0
    if c is not None:
        c, ldc, sc = _addend(c, d, ldd, sd, shape)
        c_ptr, c_type = c.data_ptr(), _checks.DTYPE_CODES[dtype_name(c.dtype)]
    bias_ptr = bias_type = 0
    if bias is not None:
        if n > 1 and bias.stride(0) != 1:
            bias = bias.contiguous()
        bias_ptr, bias_type = bias.data_ptr(), _checks.DTYPE_CODES[dtype_name(bias.dtype)]
    args = (op_a, op_b, m, n, k, alpha, a.data_ptr(), lda, b.data_ptr(), ldb, beta, c_ptr, ldc,
            c_type, d.data_ptr(), ldd, d_type, bias_ptr, bias_type, act, code)
    batch_args = (batch or 1, sa, sb, sc, sd)
    if key is not None and a is a_in and b is b_in and (out is None or d is out) and (
            len(_LAYOUTS) < _LAYOUTS_MAX):
        _LAYOUTS[key] = ((op_a, op_b, m, n, k, alpha), lda, ldb, (ldd, d_type, 0, 0, act, code),
                         batch_args, shape, d.dtype)
    return _Plan(args, batch_args, dev, d)


# _plan's remembered layouts of plain calls (see there); bounded in size.
_LAYOUTS = {}
_LAYOUTS_MAX = 4096


def _device_error(*tensors):
    first = None
    for name, t in zip(("a", "b", "out", "c", "bias"), tensors):
        if t is None:
            continue
        if not t.is_cuda:
            raise ValueError(f"{name} is on {t.device}; gemmlab.matmul needs CUDA tensors "
                             f"(move it with .cuda())")
        if first is None:
            first = t.device
        elif t.device != first:
            raise ValueError(f"{name} is on {t.device}, a on {first}: all operands must be on one GPU")
    raise ValueError(f"operands on {[None if t is None else str(t.device) for t in tensors]}: "
                     "gemmlab.matmul needs all of them on one CUDA device")


def _operand(t, rows, cols):
    """(op, ld, tensor, batch stride in elements) for an input; a contiguous copy when op/ld
    cannot express its strides."""
    strides = t.stride()
    lay = _checks.layout(rows, cols, strides[-2], strides[-1])
    if lay is None:
        t = t.contiguous()
        strides = t.stride()
        lay = (0, max(cols, 1))
    return lay[0], lay[1], t, _batch_stride(t, strides)


def _destination(out, shape, d_dtype, like):
    """(D: the tensor gemmlab writes, its ldd, its batch stride in elements): out itself when its
    rows have unit column stride and its batch entries do not overlap; else a new tensor of the
    result's dtype, copied into out after the call (c=out is then read from out)."""
    if out is not None:
        strides = out.stride()
        ldd = _result_ld(strides, shape)
        if ldd is not None:
            return out, ldd, _batch_stride(out, strides)
        dtype = out.dtype
    else:
        dtype = _TORCH_DTYPES[d_dtype]
    # device=like.device, not the int index: torch.empty(device=<int>) measured ~17 us slower
    d = _torch.empty(shape, dtype=dtype, device=like.device)
    return d, max(shape[-1], 1), _batch_stride(d, d.stride())


def _addend(c, d, ldd, sd, shape):
    """(C tensor, ldc, batch stride in elements) for beta != 0: D itself when c is D (c=out,
    in place), c where its layout reads as row-major rows
    (broadcast batch strides included), else a contiguous copy; a c that shares memory with D
    without being it is copied too (D is written while C is read)."""
    if c is d:
        return d, ldd, sd
    if c.untyped_storage().data_ptr() == d.untyped_storage().data_ptr():
        if c.data_ptr() == d.data_ptr() and c.dtype == d.dtype and c.stride() == d.stride():
            return d, ldd, sd  # another view of D's very elements: in place
        c = c.clone(memory_format=_torch.contiguous_format)
    strides = c.stride()
    m, n = shape[-2:]
    lay = _checks.layout(m, n, strides[-2], strides[-1])
    if lay is None or lay[0] != 0:
        c = c.contiguous()
        strides = c.stride()
        lay = (0, max(n, 1))
    return c, lay[1], (strides[0] if len(strides) == 3 and shape[0] > 1 else 0)


def _result_ld(strides, shape):
    """ldd for a result with these strides, or None where D cannot be written in place: rows
    without unit column stride, or overlapping batch entries."""
    m, n = shape[-2:]
    lay = _checks.layout(m, n, strides[-2], strides[-1])
    if lay is None or lay[0] != 0:
        return None
    if len(shape) == 3 and shape[0] > 1 and strides[0] < (m - 1) * lay[1] + n:
        return None  # batch entries overlap (or side by side: not worth the rule)
    return lay[1]


def _batch_stride(t, strides):
    """Elements between batch entries; 0 for a 2-D tensor or a batch of 1 (shared by every entry)."""
    if len(strides) == 3 and t.shape[0] > 1:
        return strides[0]
    return 0
