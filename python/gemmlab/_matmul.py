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
    _is_compiling = _torch.compiler.is_compiling
    _get_raw_stream = getattr(_torch._C, "_cuda_getCurrentRawStream", None) or (
        lambda device: _torch.cuda.current_stream(device).cuda_stream)


def dtype_name(dtype):
    """'float32', 'bfloat16', ... for a torch dtype."""
    return _DTYPE_NAMES.get(dtype) or str(dtype).replace("torch.", "")


def matmul(a, b, *, out=None, bias=None, activation=None, alpha=1.0, beta=0.0, c=None,
           precision=None, kernel="auto"):
    """Matrix product on the GPU: ``alpha * a @ b + beta * c`` (like ``torch.addmm``).

    a: (m, k) or (batch, m, k); b: (k, n) or (batch, k, n) (a 2-D operand is shared by every
    batch entry, so is a batch of 1). Inputs are torch tensors or any CUDA array exposing DLPack or
    ``__cuda_array_interface__`` (CuPy, JAX); both of the same dtype: float32, bfloat16 or float16.
    Non-torch arrays are checked from their protocol alone, then need PyTorch installed: they are
    wrapped as torch tensors without copies, and the result comes back as a CuPy / JAX array
    (through DLPack) for CuPy / JAX inputs, else as a torch tensor.

    precision: None follows the dtype (float32 -> exact FP32 on CUDA cores, bfloat16 -> "bf16",
    float16 -> "fp16"); "tf32" runs float32 inputs on tensor cores (what torch does when
    ``torch.backends.cuda.matmul.allow_tf32`` is True; gemmlab.matmul does not read that flag,
    gemmlab.torch.Linear does). kernel: "auto" or a name from ``gemmlab.kernels()``.

    Result: a new tensor of the input dtype, or ``out`` (shape (m, n) / (batch, m, n); float32,
    bfloat16 or float16) written in place and returned. gemmlab computes in float32 and writes a
    float32 C; the result goes straight into ``out`` when ``out`` is float32 with unit column
    stride, else into a float32 buffer that is then cast/copied (one extra pass; the default for
    16-bit inputs without ``out``, so pass a float32 ``out`` to avoid it).
    beta, c: c (float32, the result's shape) is required when beta != 0 and is not read when
    beta == 0. ``c=out`` accumulates in place; a ``c`` other than ``out`` is copied into a float32
    buffer first (so ``out`` is never written unless the call succeeds). c itself is never modified
    unless it is ``out``.

    No copies of a and b where gemmlab's op/ld can express them: a transposed view (``w.t()``) runs
    as op = T, a row-padded or sliced tensor passes its row stride as ld, a 3-D batch its batch
    stride. A matrix with neither stride 1 (e.g. ``x[:, ::2]``), or zero strides from
    ``expand``, is copied to a contiguous tensor first; foreign arrays with negative strides are
    copied by their own library (``.copy()``).

    Batches run as one gemmlab call per entry (per-entry pointers, in C++; the batched C++ API does
    not exist yet). Streams: torch inputs run on ``torch.cuda.current_stream()``; foreign inputs on
    the stream their ``__cuda_array_interface__`` names (other operands' streams are waited on),
    else on torch's current stream, which DLPack producers are asked to sync to. The call is
    asynchronous and deterministic; it can be captured in a CUDA graph and compiled by
    torch.compile (through the torch op ``gemmlab::matmul``).

    bias and activation: not yet (they need gemmlab's extended epilogue API): NotImplementedError.
    Errors: ValueError for shapes and dtypes, TypeError for unsupported objects, GemmlabError (a
    RuntimeError) with gemmlab's status name and message for the rest, including no GPU. Nothing
    is written to ``out`` when the call fails.
    """
    if bias is not None or activation is not None:
        raise NotImplementedError("gemmlab.matmul: bias and activation need gemmlab's extended "
                                  "epilogue API, which has not landed yet; add them with torch")
    if _torch is not None and isinstance(a, _torch.Tensor) and isinstance(b, _torch.Tensor):
        if _needs_torch_op(a, b, c):
            return call_torch_op(a, b, out, c, alpha, beta, precision, kernel)
        return torch_matmul(a, b, out, alpha, beta, c, precision, kernel)
    from . import _foreign
    return _foreign.matmul(a, b, out, alpha, beta, c, precision, kernel)


def _needs_torch_op(a, b, c):
    """Under torch.compile tracing, for tensor subclasses (fake, functional tensors of a trace),
    or when autograd must record the call."""
    if _is_compiling() or type(a) not in _PLAIN_TENSORS or type(b) not in _PLAIN_TENSORS:
        return True
    return _torch.is_grad_enabled() and (
        a.requires_grad or b.requires_grad or (c is not None and c.requires_grad))


def torch_matmul(a, b, out, alpha, beta, c, precision, kernel):
    """The eager implementation on torch tensors (also the torch op's implementation)."""
    (op_a, lda, a2, sa, op_b, ldb, b2, sb, acc, ldc, sc, m, n, k, batch, code,
     dev) = _plan(a, b, out, beta, c, precision)
    status = _C.gemm(op_a, op_b, m, n, k, alpha, a2.data_ptr(), lda, b2.data_ptr(), ldb, beta,
                     acc.data_ptr(), ldc, code, kernel, _get_raw_stream(dev), dev, batch, sa, sb, sc)
    if status:
        raise_status(status)
    if acc is out:
        return out
    if out is not None:
        return out.copy_(acc)
    return acc if a.dtype == _torch.float32 else acc.to(a.dtype)


def auto_kernel(a, b, *, out=None, precision=None):
    """The registry name of the kernel ``matmul(a, b, out=out, precision=precision)`` would run
    (kernel="auto", on the current GPU; for a batch, entry 0's)."""
    if not (_torch is not None and isinstance(a, _torch.Tensor) and isinstance(b, _torch.Tensor)):
        from . import _foreign
        a, b, out = _foreign.as_torch_operands(a, b, out)
    (op_a, lda, a, _, op_b, ldb, b, _, acc, ldc, _, m, n, k, _, code,
     dev) = _plan(a, b, out, 0.0, None, precision)
    name = _C.auto_kernel_name(op_a, op_b, m, n, k, a.data_ptr(), lda, b.data_ptr(), ldb,
                               acc.data_ptr(), ldc, code, dev)
    if name is None:
        raise_status()
    return name


def _plan(a, b, out, beta, c, precision):
    """One validated call, as a tuple: per input (op, ld, tensor, batch stride in bytes), the
    float32 tensor C is written to with its ldc and batch stride, m, n, k, batch, precision code,
    device index. Reads each tensor attribute once: this is the per-call overhead."""
    if beta == 0:
        c = None
    dev = a.get_device()
    if dev < 0 or b.get_device() != dev or (out is not None and out.get_device() != dev) or (
            c is not None and c.get_device() != dev):
        _device_error(a, b, out, c)
    a_dtype = a.dtype
    batch, m, n, k, code, shape = _checks.check_problem(
        a.shape, _DTYPE_NAMES.get(a_dtype) or dtype_name(a_dtype), b.shape, dtype_name(b.dtype),
        precision, None if out is None else (out.shape, dtype_name(out.dtype)),
        None if c is None else (c.shape, dtype_name(c.dtype)), beta)
    op_a, lda, a, sa = _operand(a, m, k)
    op_b, ldb, b, sb = _operand(b, k, n)
    acc, ldc, sc = _accumulator(out, c, shape, a)
    return op_a, lda, a, sa, op_b, ldb, b, sb, acc, ldc, sc, m, n, k, batch or 1, code, dev


def _device_error(*tensors):
    first = None
    for name, t in zip(("a", "b", "out", "c"), tensors):
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
    """(op, ld, tensor, batch stride in bytes) for an input; a contiguous copy when op/ld cannot
    express its strides."""
    strides = t.stride()
    lay = _checks.layout(rows, cols, strides[-2], strides[-1])
    if lay is None:
        t = t.contiguous()
        strides = t.stride()
        lay = (0, max(cols, 1))
    return lay[0], lay[1], t, _batch_stride(t, strides)


def _accumulator(out, c, shape, a):
    """(float32 tensor gemmlab writes C into, its ldc, its batch stride in bytes): out itself when
    it is float32 with unit column stride and non-overlapping batch entries and c is None or out;
    else a new buffer (a copy of c when c is used)."""
    if out is not None and out.dtype == _torch.float32 and (c is None or c is out):
        strides = out.stride()
        ldc = _result_ld(strides, shape)
        if ldc is not None:
            return out, ldc, _batch_stride(out, strides)
    if c is not None:
        acc = c.clone(memory_format=_torch.contiguous_format)
    else:
        # device=a.device, not the int index: torch.empty(device=<int>) measured ~17 us slower
        acc = _torch.empty(shape, dtype=_torch.float32, device=a.device)
    return acc, max(shape[-1], 1), _batch_stride(acc, acc.stride())


def _result_ld(strides, shape):
    m, n = shape[-2:]
    lay = _checks.layout(m, n, strides[-2], strides[-1])
    if lay is None or lay[0] != 0:
        return None
    if len(shape) == 3 and shape[0] > 1 and strides[0] < (m - 1) * lay[1] + n:
        return None  # batch entries overlap
    return lay[1]


def _batch_stride(t, strides):
    """Bytes between batch entries; 0 for a 2-D tensor or a batch of 1 (shared by every entry)."""
    if len(strides) == 3 and t.shape[0] > 1:
        return strides[0] * t.element_size()
    return 0
