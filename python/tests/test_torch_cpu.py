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
    y = torch.ops.gemmlab.matmul(a, b, None, 1.0, 0.0, None, "auto")
    assert y.shape == (2, 3, 5) and y.dtype == torch.bfloat16 and y.device.type == "meta"
    with pytest.raises(ValueError, match="inner dimensions"):
        torch.ops.gemmlab.matmul(a, a, None, 1.0, 0.0, None, "auto")


def test_linear_falls_back_on_cpu():
    ref = torch.nn.Linear(16, 7)
    lin = gt.Linear(16, 7)
    lin.load_state_dict(ref.state_dict())
    x = torch.randn(2, 3, 16)
    assert torch.equal(lin(x), ref(x))


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
