"""gemmlab.distributed: tensor-parallel GEMMs over NCCL on torch tensors, with the communication
hidden behind the GEMM (gemmlab/dist.h; docs/dist.md).

    import torch, torch.distributed as dist, gemmlab.distributed as gd
    dist.init_process_group("nccl")                  # torchrun --nproc-per-node 2 ...
    torch.cuda.set_device(dist.get_rank())
    y = gd.all_gather_matmul(x_shard, w_r.t(), bias=b_r, activation="gelu")  # column-parallel
    z = gd.matmul_reduce_scatter(y, w2_r.t())                                # row-parallel

all_gather_matmul, matmul_reduce_scatter, shard_rows, shard_offset, release, available. Every
rank of the group calls them in the same order, like any collective.

Communicators: gemmlab makes its own NCCL communicator per (process group, CUDA device) at the
first call (rank 0 of the group makes an ncclUniqueId, torch.distributed.broadcast_object_list
sends it over the group, every rank runs ncclCommInitRank on its current device), keeps it, and
destroys it at exit or at release(group). torch's own communicator is never touched.

Needs PyTorch with torch.distributed and gemmlab built with NCCL (the extension gemmlab._dist;
`pip install .` builds it where CMake finds NCCL). Without them this module still imports;
the calls raise RuntimeError saying what is missing.
"""
import atexit
import threading

from . import _checks
from ._errors import GemmlabError, require_gpu

try:
    import torch
except ImportError as e:  # gemmlab/__init__ imports this module only through gemmlab.torch
    raise ImportError("gemmlab.distributed needs PyTorch (torch.distributed); pip install torch") from e

try:
    from . import _dist
    _DIST_MISSING = None
except ImportError as e:  # built without NCCL, or libnccl.so.2 not loadable
    _dist = None
    _DIST_MISSING = str(e)

from ._matmul import _get_raw_stream, dtype_name  # noqa: E402

__all__ = ["all_gather_matmul", "matmul_reduce_scatter", "shard_rows", "shard_offset", "release",
           "available"]

_INPUT_BYTES = {"float32": 4, "bfloat16": 2, "float16": 2}
_TORCH_DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}
_MAX_CHUNKS = 64  # dist.h: Options::chunks is 0 (auto) or 1..64


# ---- the shard rule ---------------------------------------------------------------------------

def shard_rows(total, ranks, rank):
    """Rows of shard `rank` when `total` rows are split over `ranks`: total // ranks each, the
    first total % ranks ranks one more (dist::shard_rows; 301 rows on 2 ranks: 151 + 150)."""
    if ranks < 1 or not 0 <= rank < ranks:
        return 0
    return total // ranks + (1 if rank < total % ranks else 0)


def shard_offset(total, ranks, rank):
    """First row of shard `rank` (dist::shard_offset): the rows of the shards before it."""
    if ranks < 1 or not 0 <= rank < ranks:
        return 0
    return rank * (total // ranks) + min(rank, total % ranks)


def available():
    """(True, "") when gemmlab.distributed can run here (gemmlab._dist built with NCCL and
    torch.distributed present), else (False, the reason)."""
    if _dist is None:
        return False, _missing_dist_message()
    if not torch.distributed.is_available():
        return False, "this PyTorch build has no torch.distributed"
    return True, ""


def _missing_dist_message():
    return ("gemmlab was built without its NCCL extension gemmlab._dist (" + str(_DIST_MISSING) +
            "): install NCCL (scripts/deps installs the wheel nvidia-nccl-cu13, or set NCCL_HOME) "
            "and rebuild with `pip install .`")


# ---- communicators ----------------------------------------------------------------------------

# (id(group), device) -> (group, communicator as an int). The group is kept so that its id stays
# its own while the communicator lives.
_comms = {}
_lock = threading.Lock()


def _group(group):
    """(group, its size, this process's rank in it); RuntimeError without a process group."""
    if not torch.distributed.is_available():
        raise RuntimeError("gemmlab.distributed: this PyTorch build has no torch.distributed")
    if not torch.distributed.is_initialized():
        raise RuntimeError("gemmlab.distributed: no default process group; call "
                           "torch.distributed.init_process_group() first (under torchrun: "
                           "init_process_group('nccl'))")
    if group is None:
        group = torch.distributed.group.WORLD
    rank = torch.distributed.get_rank(group)
    if rank < 0:
        raise ValueError("gemmlab.distributed: this process is not a member of the group")
    return group, torch.distributed.get_world_size(group), rank


def _communicator(group, ranks, rank, device):
    """gemmlab's NCCL communicator of (group, device), made at its first use (collectively)."""
    key = (id(group), device)
    with _lock:
        entry = _comms.get(key)
        if entry is not None:
            return entry[1]
        box = [_dist.unique_id() if rank == 0 else None]
        with torch.cuda.device(device):
            torch.distributed.broadcast_object_list(
                box, src=torch.distributed.get_global_rank(group, 0), group=group)
        comm = _dist.comm_init(box[0], ranks, rank, device)
        if not comm:
            _raise(None)
        _comms[key] = (group, comm)
        return comm


def release(group=None):
    """Destroy gemmlab's NCCL communicators of `group` (None: the default group), on every
    device (dist::forget, then ncclCommDestroy; waits for their work in flight). The next call
    on the group makes a new one. Call it on every rank. Runs for all groups at exit."""
    if group is None:
        group = torch.distributed.group.WORLD
    with _lock:
        keys = [key for key, (g, _) in _comms.items() if g is group]
        entries = [(key[1], _comms.pop(key)[1]) for key in keys]
    for device, comm in entries:
        _dist.comm_destroy(comm, device)


@atexit.register
def _release_all():
    with _lock:
        entries = [(key[1], comm) for key, (_, comm) in _comms.items()]
        _comms.clear()
    for device, comm in entries:
        _dist.comm_destroy(comm, device)


def _raise(code):
    message = _dist.last_error_message() or "(no message)"
    name = _dist.status_name(code) if code is not None else message.split(":", 1)[0]
    if not message.startswith(name):
        message = f"{name}: {message}"
    raise GemmlabError(name, f"gemmlab.distributed: {message}")


# ---- argument checks (no GPU, no communication) -----------------------------------------------

def _check_tensors(**tensors):
    for name, t in tensors.items():
        if t is not None and not isinstance(t, torch.Tensor):
            raise TypeError(f"{name} must be a torch tensor; got {type(t).__name__}")
        if t is not None and name != "bias" and t.dim() != 2:
            raise ValueError(f"{name} must be 2-D; got shape {tuple(t.shape)}")


def _check_options(chunks, kernel, sm_margin):
    for name, value in (("chunks", chunks), ("sm_margin", sm_margin)):
        if name == "sm_margin" and value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{name} must be an int; got {type(value).__name__}")
    if not 0 <= chunks <= _MAX_CHUNKS:
        raise ValueError(f"chunks must be 0 (auto) or 1..{_MAX_CHUNKS}; got {chunks}")
    if sm_margin is not None and sm_margin < 0:
        raise ValueError(f"sm_margin must be >= 0; got {sm_margin}")
    if not isinstance(kernel, str):
        raise TypeError(f"kernel must be a string ('auto' or a name from gemmlab.kernels()); "
                        f"got {type(kernel).__name__}")


def _check_row_bytes(what, elements, dtype, rule):
    if elements * _INPUT_BYTES[dtype] % 16:
        raise ValueError(f"{what}: rows of {elements} {dtype} values are not a multiple of 16 bytes; "
                         f"{rule} (dist.h: the pieces must keep row 0's alignment)")


def _check_problem(a, b, bias, activation, out_dtype, precision):
    """check_problem of gemmlab.matmul on a x b (+ bias): (n, k, precision code, D dtype name,
    activation code)."""
    _, _, n, k, code, _, d_dtype, act = _checks.check_problem(
        a.shape, dtype_name(a.dtype), b.shape, dtype_name(b.dtype), precision, None, None, 0.0,
        None if bias is None else (bias.shape, dtype_name(bias.dtype)), activation,
        None if out_dtype is None else _checks.dtype_arg(out_dtype))
    return n, k, code, d_dtype, act


def _check_devices(**tensors):
    first = None
    for name, t in tensors.items():
        if t is None:
            continue
        if not t.is_cuda:
            raise ValueError(f"{name} is on {t.device}; gemmlab.distributed needs CUDA tensors")
        if first is None:
            first = t.device
        elif t.device != first:
            raise ValueError(f"{name} is on {t.device}, the first operand on {first}: all operands "
                             "must be on one GPU")
    return first.index


def _check_grad(*tensors):
    if torch.is_grad_enabled() and any(t is not None and t.requires_grad for t in tensors):
        raise RuntimeError("gemmlab.distributed computes forward passes only (no autograd): call it "
                           "under torch.no_grad() / torch.inference_mode(), or on detached tensors")


def _ready(device):
    """Raises where no GPU or no gemmlab._dist; the first check that touches the GPU runtime."""
    require_gpu()
    if _dist is None:
        raise RuntimeError("gemmlab.distributed: " + _missing_dist_message())


# ---- operands ---------------------------------------------------------------------------------

def _weight(b, k, n):
    """(op_b, ldb, tensor) for B: w.t() runs as op = T without a copy."""
    lay = _checks.layout(k, n, b.stride(0), b.stride(1))
    if lay is None:
        b = b.contiguous()
        lay = (0, max(n, 1))
    return lay[0], lay[1], b


def _bias(bias):
    if bias is None:
        return None, 0, 0
    if bias.numel() > 1 and bias.stride(0) != 1:
        bias = bias.contiguous()
    return bias, bias.data_ptr(), _checks.DTYPE_CODES[dtype_name(bias.dtype)]


def _result(rows, n, d_dtype, device):
    """(D, ldd): rows x n, its rows padded to 16 bytes where n alone would not keep them aligned
    (D is then a column slice of the padded tensor)."""
    per16 = 16 // _INPUT_BYTES[d_dtype]
    ldd = max(-(-n // per16) * per16, per16)
    d = torch.empty((rows, ldd), dtype=_TORCH_DTYPES[d_dtype], device=device)
    return (d if ldd == n else d[:, :n]), ldd


def _total_rows(local, group, device):
    """The ranks' rows summed over the group: one tiny all-reduce and a host synchronization."""
    t = torch.tensor([local], dtype=torch.int64, device=device)
    torch.distributed.all_reduce(t, group=group)
    return int(t.item())


# ---- the calls --------------------------------------------------------------------------------

def all_gather_matmul(a_shard, b, *, group=None, rows=None, bias=None, activation=None,
                      out_dtype=None, precision=None, chunks=0, kernel="auto", sm_margin=None,
                      gathered=None):
    """Column-parallel GEMM with a sequence-parallel input (Megatron's ColumnParallelLinear):

        result (rows x n_r) = act(A @ b + bias),   A = [A_0; A_1; ...; A_{P-1}] (rows x k)

    every rank r of the group (P ranks) passing its row shard ``a_shard`` = A_r (shard_rows(rows,
    P, r) x k: rows // P each, the first rows % P ranks one more) and its own ``b`` (k x n_r; n_r
    may differ between ranks): A is all-gathered while the GEMM of the shards already there runs
    (gemmlab::dist::all_gather_gemm), and the result is the rank's columns for all rows.

    rows: the total rows of A, or None: gemmlab all-reduces the ranks' row counts (one small
    collective and a host synchronization per call; pass rows= to avoid it). A rank whose
    a_shard does not hold shard_rows(rows, P, r) rows is a ValueError.

    b: a (k, n_r) tensor, or the transpose of a weight ``w_r.t()`` (w_r n_r x k, as nn.Linear
    stores it): that runs as op(B) = B^T without a copy. a_shard is read as dense rows (a
    contiguous copy is made otherwise); k times the element size must be a multiple of 16 bytes
    (k a multiple of 8 for 16-bit inputs, of 4 for float32). bias: n_r values, float32 or the
    input dtype. activation: None, "relu", "gelu" (erf), "gelu_tanh" or "silu". out_dtype:
    float32, bfloat16 or float16 (None: the input dtype). precision: as in gemmlab.matmul
    (float32 inputs: None = exact FP32, "tf32"). The result's rows are padded to 16 bytes where
    n_r alone does not give that (the result is then a column slice of a wider tensor).

    chunks: pieces per shard (0: auto, else 1..64); results are bit-identical for every chunk
    count. kernel: "auto" (the kernel auto picks for the whole rows x n_r x k product) or a
    registry name. sm_margin: SMs the GEMM pieces beside a transfer leave to NCCL
    (None: gemmlab's default for the rank count). gathered: None, or a contiguous
    (rows, k) tensor of a_shard's dtype that receives A.

    group: a torch.distributed process group (None: the default group). Runs on
    torch.cuda.current_stream() of the operands' device, asynchronously (except at a shape's first
    call, whose cross-rank check synchronizes), and returns without communicating with the host.
    Forward only: inputs that require grad raise RuntimeError unless grad mode is off.

    Errors: TypeError / ValueError for arguments, before any GPU work or communication;
    RuntimeError without a process group, without a GPU (GemmlabError NoDevice) or without
    gemmlab's NCCL extension; GemmlabError for gemmlab's statuses (e.g. InvalidValue when the
    ranks' shapes disagree, raised on every rank).
    """
    _check_tensors(a_shard=a_shard, b=b, bias=bias, gathered=gathered)
    n, k, code, d_dtype, act = _check_problem(a_shard, b, bias, activation, out_dtype, precision)
    _check_options(chunks, kernel, sm_margin)
    a_dtype = dtype_name(a_shard.dtype)
    _check_row_bytes("a_shard", k, a_dtype, "all_gather_matmul needs k a multiple of "
                     f"{16 // _INPUT_BYTES[a_dtype]} for {a_dtype}")
    group, ranks, rank = _group(group)
    local = a_shard.shape[0]
    if rows is not None:
        _check_rows(rows, ranks, rank, local)
    if gathered is not None and rows is not None:
        _check_gathered(gathered, rows, k, a_shard.dtype)
    device = _check_devices(a_shard=a_shard, b=b, bias=bias, gathered=gathered)
    _check_grad(a_shard, b, bias)
    _ready(device)
    if rows is None:
        rows = _total_rows(local, group, a_shard.device)
        _check_rows(rows, ranks, rank, local)
        if gathered is not None:
            _check_gathered(gathered, rows, k, a_shard.dtype)
    if not a_shard.is_contiguous():
        a_shard = a_shard.contiguous()
    op_b, ldb, b = _weight(b, k, n)
    bias, bias_ptr, bias_type = _bias(bias)
    d, ldd = _result(rows, n, d_dtype, a_shard.device)
    comm = _communicator(group, ranks, rank, device)
    status = _dist.all_gather_gemm(
        op_b, rows, n, k, 1.0, a_shard.data_ptr(), k, b.data_ptr(), ldb, 0.0, 0, 0, 0,
        d.data_ptr(), ldd, _checks.DTYPE_CODES[d_dtype], bias_ptr, bias_type, act, code, comm,
        _get_raw_stream(device), device, chunks, kernel, -1 if sm_margin is None else sm_margin,
        0 if gathered is None else gathered.data_ptr())
    if status:
        _raise(status)
    return d


def matmul_reduce_scatter(a, b_shard, *, group=None, bias=None, activation=None, out_dtype=None,
                          precision=None, chunks=0, partial_dtype=None, kernel="auto",
                          sm_margin=None):
    """Row-parallel GEMM with a sequence-parallel output (Megatron's RowParallelLinear):

        result_r (shard_rows(m, P, r) x n) = act((sum over ranks s of a_s @ b_s)[rows of r] + bias)

    every rank s of the group (P ranks) passing ``a`` = a_s (m x k_s: all m rows, its slice of K)
    and ``b_shard`` = b_s (k_s x n); k_s may differ between ranks, m and n may not. Each rank gets
    its rows of the summed product: shard_rows(m, P, r) rows starting at shard_offset(m, P, r)
    (m // P each, the first m % P ranks one more). The partial products travel while the GEMM of
    the next piece runs, and gemmlab sums them in rank order 0..P-1 in float32 before the bias and
    activation (gemmlab::dist::gemm_reduce_scatter; NCCL's reduction is never used).

    b_shard: a (k_s, n) tensor, or ``w_s.t()`` (w_s n x k_s, as nn.Linear stores it), op(B) = B^T
    without a copy. a is read by rows (a transposed view is copied); k_s times the element size
    must be a multiple of 16 bytes, and so must n times the partials' element size. partial_dtype:
    the dtype the partials travel in, float32 (None, the default; exact sums of the float32
    products) or bfloat16 / float16 (half the bytes, rounded before the sum). bias: n values,
    added once after the sum. activation, out_dtype, precision, chunks, kernel, sm_margin, group,
    streams, determinism (bit-identical for every chunk count), forward only, and errors: as in
    all_gather_matmul.
    """
    _check_tensors(a=a, b_shard=b_shard, bias=bias)
    n, k, code, d_dtype, act = _check_problem(a, b_shard, bias, activation, out_dtype, precision)
    _check_options(chunks, kernel, sm_margin)
    partial = _partial_dtype(partial_dtype)
    a_dtype = dtype_name(a.dtype)
    _check_row_bytes("a", k, a_dtype, "matmul_reduce_scatter needs k_s a multiple of "
                     f"{16 // _INPUT_BYTES[a_dtype]} for {a_dtype}")
    _check_row_bytes("the partials", n, partial, f"n must be a multiple of "
                     f"{16 // _INPUT_BYTES[partial]} for {partial} partials")
    group, ranks, rank = _group(group)
    device = _check_devices(a=a, b_shard=b_shard, bias=bias)
    _check_grad(a, b_shard, bias)
    _ready(device)
    m = a.shape[0]
    lay = _checks.layout(m, k, a.stride(0), a.stride(1))
    if lay is None or lay[0] != 0 or lay[1] * _INPUT_BYTES[a_dtype] % 16:
        a = a.contiguous()
        lay = (0, max(k, 1))
    op_b, ldb, b_shard = _weight(b_shard, k, n)
    bias, bias_ptr, bias_type = _bias(bias)
    d, ldd = _result(shard_rows(m, ranks, rank), n, d_dtype, a.device)
    comm = _communicator(group, ranks, rank, device)
    status = _dist.gemm_reduce_scatter(
        op_b, m, n, k, 1.0, a.data_ptr(), lay[1], b_shard.data_ptr(), ldb, 0.0, 0, 0, 0,
        d.data_ptr(), ldd, _checks.DTYPE_CODES[d_dtype], bias_ptr, bias_type, act, code, comm,
        _get_raw_stream(device), device, chunks, kernel, -1 if sm_margin is None else sm_margin,
        _checks.DTYPE_CODES[partial])
    if status:
        _raise(status)
    return d


def _check_rows(rows, ranks, rank, local):
    if isinstance(rows, bool) or not isinstance(rows, int):
        raise TypeError(f"rows must be None or an int; got {type(rows).__name__}")
    if rows < 0:
        raise ValueError(f"rows must be >= 0; got {rows}")
    expected = shard_rows(rows, ranks, rank)
    if expected != local:
        raise ValueError(f"rank {rank} of {ranks} holds shard_rows({rows}, {ranks}, {rank}) = "
                         f"{expected} rows of A (rows // ranks each, the first rows % ranks ranks "
                         f"one more); a_shard has {local}")


def _check_gathered(gathered, rows, k, dtype):
    if tuple(gathered.shape) != (rows, k) or gathered.dtype != dtype or not gathered.is_contiguous():
        raise ValueError(f"gathered must be a contiguous ({rows}, {k}) tensor of {dtype}; got "
                         f"{tuple(gathered.shape)} {gathered.dtype}"
                         f"{'' if gathered.is_contiguous() else ' (not contiguous)'}")


def _partial_dtype(partial_dtype):
    if partial_dtype is None:
        return "float32"
    name = _checks.dtype_arg(partial_dtype)
    if not isinstance(name, str):
        raise TypeError(f"partial_dtype must be None, a torch dtype or its name; got "
                        f"{type(partial_dtype).__name__}")
    name = {"fp32": "float32", "bf16": "bfloat16", "fp16": "float16"}.get(name, name)
    if name not in _INPUT_BYTES:
        raise ValueError(f"partial_dtype must be float32, bfloat16 or float16; got {partial_dtype}")
    return name

