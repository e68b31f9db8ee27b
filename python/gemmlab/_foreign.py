"""Inputs that are not torch tensors: objects exposing __cuda_array_interface__ (CuPy, Numba,
JAX) or DLPack (__dlpack__ / __dlpack_device__). Their shapes, dtypes and devices are checked from
the protocol alone (no GPU work, no torch needed), then they are wrapped as torch tensors without
copies and run through the torch path on the stream the protocol names."""
import contextlib
import sys
from collections import namedtuple

from . import _checks
from ._errors import require_gpu

# What the checks need to know of an operand, read from its protocol.
Info = namedtuple("Info", "shape dtype on_cuda where stream")

_CAI_DTYPES = {"<f4": "float32", "<f2": "float16"}
_DLPACK_DEVICES = {1: "CPU", 2: "CUDA", 3: "CUDA host memory", 4: "OpenCL", 7: "Vulkan", 8: "Metal",
                   10: "ROCm", 13: "CUDA managed memory"}
_DLPACK_CUDA = (2, 13)


def describe(x, name):
    """Info of an operand, or TypeError for objects gemmlab cannot read."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(x, torch.Tensor):
        return Info(tuple(x.shape), str(x.dtype).replace("torch.", ""), x.is_cuda, str(x.device), None)
    cai = getattr(x, "__cuda_array_interface__", None)
    if cai is not None:
        typestr = cai.get("typestr", "?")
        return Info(tuple(cai["shape"]), _CAI_DTYPES.get(typestr, f"typestr {typestr}"), True,
                    "cuda (__cuda_array_interface__)", cai.get("stream"))
    if hasattr(x, "__dlpack_device__"):
        dev_type, dev_id = x.__dlpack_device__()
        where = f"{_DLPACK_DEVICES.get(int(dev_type), 'device type %d' % int(dev_type))} (DLPack)"
        return Info(tuple(x.shape), str(x.dtype), int(dev_type) in _DLPACK_CUDA, where, None)
    raise TypeError(f"{name}: expected a torch tensor or a CUDA array exposing DLPack or "
                    f"__cuda_array_interface__; got {type(x).__name__}")


def matmul(a, b, out, alpha, beta, c, precision, kernel, bias=None, activation=None,
           out_dtype=None):
    operands = {"a": a, "b": b, "out": out, "c": c if beta != 0 else None, "bias": bias}
    info = {name: describe(x, name) for name, x in operands.items() if x is not None}
    for name, i in info.items():
        if not i.on_cuda:
            raise ValueError(f"{name} is on {i.where}; gemmlab.matmul needs CUDA arrays")
    out_dtype = _checks.dtype_arg(out_dtype)
    _checks.check_problem(info["a"].shape, info["a"].dtype, info["b"].shape, info["b"].dtype,
                          precision, _pair(info.get("out")), _pair(info.get("c")), beta,
                          _pair(info.get("bias")), activation, out_dtype)
    require_gpu()
    torch = _require_torch()
    from ._matmul import matmul as gemmlab_matmul
    with _stream_of(torch, info):
        t = {name: as_torch(x) for name, x in operands.items() if x is not None}
        result = gemmlab_matmul(t["a"], t["b"], out=t.get("out"), bias=t.get("bias"),
                                activation=activation, out_dtype=out_dtype, alpha=alpha,
                                beta=beta, c=t.get("c"), precision=precision, kernel=kernel)
    return out if out is not None else _like(result, a)


def as_torch_operands(*xs):
    """torch views of the given operands (None stays None), for auto_kernel."""
    require_gpu()
    _require_torch()
    return [None if x is None else as_torch(x) for x in xs]


def as_torch(x):
    """A torch tensor sharing x's memory (a copy by x's own library if its strides are negative)."""
    torch = sys.modules["torch"]
    if isinstance(x, torch.Tensor):
        return x
    cai = getattr(x, "__cuda_array_interface__", None)
    if cai is not None:
        if any(s < 0 for s in (cai.get("strides") or ())):
            x = x.copy()
        return torch.as_tensor(x)
    return torch.from_dlpack(x)  # passes torch's current stream to x.__dlpack__


def _pair(i):
    return None if i is None else (i.shape, i.dtype)


def _require_torch():
    torch = sys.modules.get("torch")
    if torch is None:
        try:
            import torch
        except ImportError:
            raise RuntimeError("gemmlab.matmul on DLPack / __cuda_array_interface__ arrays needs "
                               "PyTorch (pip install torch): it wraps them without copies and "
                               "allocates results through torch") from None
    return torch


def _stream_of(torch, info):
    """Context running the call on the first __cuda_array_interface__ stream, after the others;
    torch's current stream when no operand names one."""
    streams = []
    for i in info.values():
        if i.stream is not None and i.stream not in streams:
            streams.append(i.stream)
    if not streams:
        return contextlib.nullcontext()
    main, *others = [_torch_stream(torch, s) for s in streams]
    for other in others:
        main.wait_stream(other)
    return torch.cuda.stream(main)


def _torch_stream(torch, handle):
    # __cuda_array_interface__: 1 is the legacy default stream, 2 the per-thread default stream.
    if handle == 1:
        return torch.cuda.default_stream()
    return torch.cuda.ExternalStream(handle)


def _like(result, a):
    """The result as an array of a's library where it reads DLPack (CuPy, JAX), else torch."""
    library = type(a).__module__.split(".")[0]
    if library == "cupy":
        return sys.modules["cupy"].from_dlpack(result)
    if library in ("jax", "jaxlib"):
        import jax.numpy as jnp
        return jnp.from_dlpack(result)
    return result
