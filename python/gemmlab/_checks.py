"""Argument checks on shapes and dtype names, shared by every kind of input (torch tensors,
DLPack, __cuda_array_interface__) and by the fake implementation of the torch op. They raise
ValueError and never touch the GPU."""

PRECISIONS = {"fp32": 0, "tf32": 1, "bf16": 2, "fp16": 3}
# Input dtype name -> the precisions it can run, the first being the default.
DTYPE_PRECISIONS = {"float32": ("fp32", "tf32"), "bfloat16": ("bf16",), "float16": ("fp16",)}
OUTPUT_DTYPES = ("float32", "bfloat16", "float16")
# gemmlab::DType of C, D and the bias, by dtype name.
DTYPE_CODES = {"float32": 0, "bfloat16": 2, "float16": 3}
# Names out_dtype may also be given as (gemmlab's precision names).
_DTYPE_ALIASES = {"fp32": "float32", "bf16": "bfloat16", "fp16": "float16"}
# activation= -> gemmlab::Activation. "gelu" is the erf form (torch.nn.functional.gelu's default).
ACTIVATIONS = {None: 0, "relu": 1, "gelu_tanh": 2, "gelu": 3, "gelu_erf": 3, "silu": 4}


_DEFAULT_CODES = {dtype: PRECISIONS[allowed[0]] for dtype, allowed in DTYPE_PRECISIONS.items()}


def precision_code(dtype, precision):
    """The gemmlab Precision (int) for inputs of this dtype name and a precision name or None."""
    if precision is None and dtype in _DEFAULT_CODES:
        return _DEFAULT_CODES[dtype]
    allowed = DTYPE_PRECISIONS.get(dtype)
    if allowed is None:
        raise ValueError(f"unsupported input dtype {dtype}: gemmlab takes float32, bfloat16 or float16")
    if precision not in allowed:
        raise ValueError(f"precision {precision!r} does not apply to {dtype} inputs "
                         f"(allowed: {', '.join(map(repr, allowed))}, or None)")
    return PRECISIONS[precision]


def batch_of(a_shape, b_shape):
    """The batch size of a (.., m, k) x (.., k, n) product, or None for a plain 2-D product."""
    batches = [s[0] for s in (a_shape, b_shape) if len(s) == 3]
    if not batches:
        return None
    if len(batches) == 2 and batches[0] != batches[1] and 1 not in batches:
        raise ValueError(f"batch sizes differ: a is {tuple(a_shape)}, b is {tuple(b_shape)}")
    return max(batches)


def activation_code(activation):
    """The gemmlab Activation (int) for activation= (None, "relu", "gelu", "gelu_tanh", "silu")."""
    try:
        return ACTIVATIONS[activation]
    except (KeyError, TypeError):
        pass
    if not isinstance(activation, str):
        raise TypeError(f"activation must be None or a string; got {type(activation).__name__}")
    raise ValueError(f"unknown activation {activation!r}: use None, 'relu', 'gelu' (erf form, "
                     f"torch's default), 'gelu_tanh' or 'silu'")


def dtype_arg(dtype):
    """out_dtype= as a name: a torch dtype becomes its name ("bfloat16"); anything else is left
    for output_dtype to judge."""
    if type(dtype).__name__ == "dtype" and type(dtype).__module__ == "torch":
        return str(dtype).replace("torch.", "")
    return dtype


def output_dtype(out_dtype, a_dtype):
    """The result's dtype name for out_dtype= (a dtype name or None: the input dtype)."""
    if out_dtype is None:
        return a_dtype
    if not isinstance(out_dtype, str):
        raise TypeError(f"out_dtype must be None, a torch dtype (float32, bfloat16, float16) or its "
                        f"name; got {type(out_dtype).__name__}")
    name = _DTYPE_ALIASES.get(out_dtype, out_dtype)
    if name not in OUTPUT_DTYPES:
        raise ValueError(f"out_dtype must be float32, bfloat16 or float16; got {out_dtype}")
    return name


def check_problem(a_shape, a_dtype, b_shape, b_dtype, precision, out=None, c=None, beta=0.0,
                  bias=None, activation=None, out_dtype=None):
    """Validate a product; out, c and bias are (shape, dtype name) pairs or None, out_dtype a
    dtype name or None. Returns (batch or None, m, n, k, precision code, result shape, result
    dtype name, activation code)."""
    na, nb = len(a_shape), len(b_shape)
    if na not in (2, 3) or nb not in (2, 3):
        name, shape = ("a", a_shape) if na not in (2, 3) else ("b", b_shape)
        raise ValueError(f"{name} must be 2-D (rows x cols) or 3-D (batch x rows x cols); "
                         f"got shape {tuple(shape)}")
    m, k, k_b, n = a_shape[na - 2], a_shape[na - 1], b_shape[nb - 2], b_shape[nb - 1]
    if k != k_b:
        raise ValueError(f"inner dimensions differ: a is {tuple(a_shape)}, b is {tuple(b_shape)}")
    if a_dtype != b_dtype:
        raise ValueError(f"a and b must have the same dtype; got {a_dtype} and {b_dtype}")
    code = precision_code(a_dtype, precision)
    act = activation_code(activation)
    batch = None if na == 2 and nb == 2 else batch_of(a_shape, b_shape)
    shape = (m, n) if batch is None else (batch, m, n)
    if out is not None:
        _check_result_operand("out", out, shape, OUTPUT_DTYPES)
        d_dtype = out[1]
        if out_dtype is not None and output_dtype(out_dtype, a_dtype) != d_dtype:
            raise ValueError(f"out_dtype={out_dtype} contradicts out, which is {d_dtype} "
                             f"(out's dtype is the result's: leave out_dtype out)")
    else:
        d_dtype = output_dtype(out_dtype, a_dtype)
    if beta != 0:
        if c is None:
            raise ValueError("beta != 0 needs c (the matrix to add; pass c=out to accumulate into out)")
        _check_result_operand("c", c, shape, OUTPUT_DTYPES)
    if bias is not None:
        bias_shape, bias_dtype = bias
        if tuple(bias_shape) != (n,):
            raise ValueError(f"bias must be 1-D with n = {n} values (one per column of the "
                             f"result); got shape {tuple(bias_shape)}")
        allowed = ("float32",) if a_dtype == "float32" else ("float32", a_dtype)
        if bias_dtype not in allowed:
            raise ValueError(f"bias must be {' or '.join(allowed)} for {a_dtype} inputs; "
                             f"got {bias_dtype}")
    return batch, m, n, k, code, shape, d_dtype, act


# check_problem's successful answers by argument tuple: the per-call overhead of gemmlab.matmul
# repeats the same few signatures (a model's layers), and a dict lookup is ~1 us cheaper than
# the checks. Failed checks are never stored (they raise every time); bounded in size.
_PROBLEMS = {}
_PROBLEMS_MAX = 4096


def check_problem_cached(*args):
    """check_problem(*args), remembered per argument tuple (positional arguments, as check_problem
    takes them). Unhashable arguments (a list for a shape) are checked without the cache."""
    try:
        hit = _PROBLEMS.get(args)
    except TypeError:
        return check_problem(*args)
    if hit is None:
        hit = check_problem(*args)
        if len(_PROBLEMS) < _PROBLEMS_MAX:
            _PROBLEMS[args] = hit
    return hit


def _check_result_operand(name, operand, shape, dtypes):
    op_shape, op_dtype = operand
    if op_shape != shape:  # a tuple or a torch.Size
        raise ValueError(f"{name} must have shape {shape} (the result's); got {tuple(op_shape)}")
    if op_dtype not in dtypes:
        raise ValueError(f"{name} must be {' or '.join(dtypes)}; got {op_dtype}")


def layout(rows, cols, row_stride, col_stride):
    """(op, ld) expressing a rows x cols matrix with these element strides as gemmlab's row-major
    op(X) (op 0 = N: rows of ld elements; op 1 = T: the transpose of a stored cols x rows matrix),
    or None when no op/ld can (both strides != 1, overlapping or negative strides)."""
    if cols == 1:
        col_stride = 1
    if rows == 1:
        row_stride = max(cols, 1)
    if col_stride == 1 and row_stride >= max(cols, 1):
        return 0, row_stride
    if row_stride == 1 and col_stride >= max(rows, 1):
        return 1, col_stride
    return None
