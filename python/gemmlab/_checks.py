"""Argument checks on shapes and dtype names, shared by every kind of input (torch tensors,
DLPack, __cuda_array_interface__) and by the fake implementation of the torch op. They raise
ValueError and never touch the GPU."""

PRECISIONS = {"fp32": 0, "tf32": 1, "bf16": 2, "fp16": 3}
# Input dtype name -> the precisions it can run, the first being the default.
DTYPE_PRECISIONS = {"float32": ("fp32", "tf32"), "bfloat16": ("bf16",), "float16": ("fp16",)}
OUTPUT_DTYPES = ("float32", "bfloat16", "float16")


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


def check_problem(a_shape, a_dtype, b_shape, b_dtype, precision, out=None, c=None, beta=0.0):
    """Validate a product; out and c are (shape, dtype name) pairs or None.
    Returns (batch or None, m, n, k, precision code, result shape)."""
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
    batch = None if na == 2 and nb == 2 else batch_of(a_shape, b_shape)
    shape = (m, n) if batch is None else (batch, m, n)
    if out is not None:
        _check_result_operand("out", out, shape, OUTPUT_DTYPES)
    if beta != 0:
        if c is None:
            raise ValueError("beta != 0 needs c (the matrix to add; pass c=out to accumulate into out)")
        _check_result_operand("c", c, shape, ("float32",))
    return batch, m, n, k, code, shape


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
