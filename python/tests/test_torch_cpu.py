"""torch integration without a GPU: CPU tensors are rejected, the torch op's fake implementation
gives shapes, Linear falls back to torch off the GPU, patch() picks the layers its rule says."""
import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed")
import gemmlab  # noqa: E402
import gemmlab.torch as gt  # noqa: E402


def test_cpu_tensors_rejected():
    a, b = torch.randn(4, 5), torch.randn(5, 3)
    with pytest.raises(ValueError, match="needs CUDA tensors"):
        gemmlab.matmul(a, b)
    with pytest.raises(ValueError, match="needs CUDA tensors"):  # through the torch op (autograd)
        gemmlab.matmul(a.requires_grad_(), b)


def test_fake_implementation_shapes():
    a = torch.empty(3, 4, device="meta", dtype=torch.bfloat16)
    b = torch.empty(2, 4, 5, device="meta", dtype=torch.bfloat16)
    y = torch.ops.gemmlab.matmul(a, b, None, None, 1.0, 0.0, None, None, None, "auto")
    assert y.shape == (2, 3, 5) and y.dtype == torch.bfloat16 and y.device.type == "meta"
    with pytest.raises(ValueError, match="inner dimensions"):
        torch.ops.gemmlab.matmul(a, a, None, None, 1.0, 0.0, None, None, None, "auto")


def test_fake_implementation_epilogue():
    """The fake implementation follows out_dtype (default: the input dtype) and checks bias and
    activation as the eager call does."""
    a = torch.empty(3, 4, device="meta", dtype=torch.float16)
    b = torch.empty(4, 5, device="meta", dtype=torch.float16)
    bias = torch.empty(5, device="meta", dtype=torch.float32)
    op = torch.ops.gemmlab.matmul
    y = op(a, b, None, bias, 1.0, 0.0, "gelu", None, None, "auto")
    assert y.shape == (3, 5) and y.dtype == torch.float16
    y = op(a, b, None, bias, 1.0, 0.0, "silu", torch.float32, None, "auto")
    assert y.dtype == torch.float32
    assert op(a, b, None, None, 1.0, 0.0, None, torch.bfloat16, None, "auto").dtype == torch.bfloat16
    with pytest.raises(ValueError, match="bias must be 1-D with n = 5"):
        op(a, b, None, bias[:4], 1.0, 0.0, None, None, None, "auto")
    with pytest.raises(ValueError, match="bias must be float32 or float16"):
        op(a, b, None, bias.bfloat16(), 1.0, 0.0, None, None, None, "auto")
    with pytest.raises(ValueError, match="unknown activation"):
        op(a, b, None, None, 1.0, 0.0, "tanh", None, None, "auto")
    with pytest.raises(ValueError, match="out_dtype must be"):
        op(a, b, None, None, 1.0, 0.0, None, torch.float64, None, "auto")
    out = torch.empty(3, 5, device="meta", dtype=torch.bfloat16)
    torch.ops.gemmlab.matmul_out(a, b, out, None, bias, 1.0, 0.0, "relu", None, "auto")
    c = torch.empty(3, 5, device="meta", dtype=torch.float16)
    torch.ops.gemmlab.matmul_out(a, b, out, c, None, 1.0, 1.0, None, None, "auto")


def test_through_the_op_on_meta_tensors():
    """With autograd recording, gemmlab.matmul goes through the torch op, whose meta (fake)
    implementation gives the result's shape and dtype: out_dtype as a name or a torch dtype."""
    a = torch.empty(2, 3, 4, device="meta", dtype=torch.bfloat16, requires_grad=True)
    w = torch.empty(5, 4, device="meta", dtype=torch.bfloat16)
    bias = torch.empty(5, device="meta", dtype=torch.bfloat16, requires_grad=True)
    y = gemmlab.matmul(a, w.t(), bias=bias, activation="gelu_tanh")
    assert y.shape == (2, 3, 5) and y.dtype == torch.bfloat16 and y.requires_grad
    assert gemmlab.matmul(a, w.t(), out_dtype="float32").dtype == torch.float32
    assert gemmlab.matmul(a, w.t(), out_dtype=torch.float16).dtype == torch.float16
    with pytest.raises(ValueError, match="unknown activation"):
        gemmlab.matmul(a, w.t(), activation="gelu_fast")
    with pytest.raises(TypeError, match="activation must be None or a string"):
        gemmlab.matmul(a, w.t(), activation=torch.nn.GELU())
    with pytest.raises(ValueError, match="out_dtype must be"):
        gemmlab.matmul(a, w.t(), out_dtype="float64")
    with pytest.raises(ValueError, match="out_dtype must be"):
        gemmlab.matmul(a, w.t(), out_dtype=torch.int8)


def test_epilogue_errors_on_cpu_tensors():
    """Devices are checked first (a CPU bias is named), before dtypes and shapes."""
    a, b = torch.randn(4, 5), torch.randn(5, 3)
    with pytest.raises(ValueError, match="needs CUDA tensors"):
        gemmlab.matmul(a, b, bias=torch.zeros(3), activation="relu")
    with pytest.raises(ValueError, match="bias is on cpu"):
        gemmlab._matmul._device_error(None, None, None, None, torch.zeros(3))


def test_linear_falls_back_on_cpu():
    ref = torch.nn.Linear(16, 7)
    lin = gt.Linear(16, 7)
    lin.load_state_dict(ref.state_dict())
    x = torch.randn(2, 3, 16)
    assert torch.equal(lin(x), ref(x))


@pytest.mark.parametrize("activation, function", [
    ("relu", torch.nn.functional.relu),
    ("gelu", torch.nn.functional.gelu),
    ("gelu_tanh", lambda y: torch.nn.functional.gelu(y, approximate="tanh")),
    ("silu", torch.nn.functional.silu),
])
def test_linear_activation_falls_back_on_cpu(activation, function):
    ref = torch.nn.Linear(16, 7)
    lin = gt.Linear(16, 7, activation=activation)
    lin.load_state_dict(ref.state_dict())  # same state_dict: the activation is no parameter
    x = torch.randn(2, 3, 16)
    assert torch.equal(lin(x), function(ref(x)))
    assert f"activation={activation!r}" in repr(lin)


def test_linear_arguments():
    with pytest.raises(ValueError, match="unknown activation"):
        gt.Linear(4, 4, activation="tanh")
    lin = gt.Linear(4, 3, bias=False, dtype=torch.float64)
    assert lin.activation is None and lin.bias is None and lin.weight.dtype == torch.float64
    assert "activation" not in repr(lin)


def _model(dtype):
    return torch.nn.Sequential(torch.nn.Linear(768, 768), torch.nn.Linear(768, 50257),
                               torch.nn.Linear(4097, 64), torch.nn.Linear(12, 8)).to(dtype)


@pytest.mark.parametrize("dtype, expected", [
    (torch.float32, ["1", "2"]),          # 50257 and 4097 floats: rows of 4 * odd bytes; 12 * 4 = 48
    (torch.bfloat16, ["1", "2", "3"]),    # 12 * 2 = 24 bytes is not a multiple of 16
])
def test_patch_auto_rule(dtype, expected):
    model = _model(dtype)
    keys = list(model.state_dict())
    assert gt.patch(model) == expected
    assert [type(m) is gt.Linear for m in model] == [str(i) in expected for i in range(4)]
    assert list(model.state_dict()) == keys


def test_patch_all_and_errors():
    model = _model(torch.float32)
    assert gt.patch(model, where="all") == ["0", "1", "2", "3"]
    assert gt.patch(model, where="all") == []  # already gemmlab layers
    with pytest.raises(ValueError, match="where"):
        gt.patch(model, where="fast")
