"""Tests without a GPU and without torch: import, version, the registry, and argument errors,
which must come before any GPU work (a fake __cuda_array_interface__ pointer is never touched)."""
import importlib.metadata
import pathlib
import re

import pytest

import gemmlab
from gemmlab import _foreign

REPO = pathlib.Path(__file__).resolve().parents[2]


class FakeCAI:
    """A CUDA array that exists only as its __cuda_array_interface__ (the pointer is never valid)."""

    def __init__(self, shape, typestr="<f4", stream=None):
        self.__cuda_array_interface__ = {"shape": tuple(shape), "typestr": typestr, "strides": None,
                                         "data": (0x7F0000000000, False), "version": 3, "stream": stream}


class HostDLPack:
    """An array on the CPU as DLPack describes it (like a NumPy array)."""
    shape, dtype = (4, 4), "float32"

    def __dlpack_device__(self):
        return (1, 0)


@pytest.fixture
def no_gpu_work(monkeypatch):
    """Fails the test if the call gets as far as looking for a GPU."""
    def touched():
        raise AssertionError("the call reached the GPU check before rejecting its arguments")
    monkeypatch.setattr(_foreign, "require_gpu", touched)


def test_version():
    cmake = (REPO / "CMakeLists.txt").read_text()
    assert gemmlab.__version__ == re.search(r"project\(gemmlab[^)]*VERSION\s+([0-9.]+)", cmake).group(1)
    assert importlib.metadata.version("gemmlab") == gemmlab.__version__


def test_kernels():
    ks = gemmlab.kernels()
    assert ks, "empty registry"
    assert len({k["name"] for k in ks}) == len(ks)
    for k in ks:
        assert set(k) == {"name", "step", "family", "seed", "summary", "dtypes", "min_cc", "auto_priority"}
        assert k["name"].startswith(k["family"].replace(".", "_") + "/") or k["name"].startswith(k["family"] + "/")
        assert k["dtypes"] and set(k["dtypes"]) <= {"fp32", "tf32", "bf16", "fp16"}
        assert k["min_cc"] >= 50 and k["auto_priority"] >= 0 and k["step"] >= 1
    assert {"simt", "mma_sync", "wgmma", "gemv"} <= {k["family"] for k in ks}


@pytest.mark.parametrize("a, b, kwargs, match", [
    ((4, 5), (6, 7), {}, "inner dimensions"),
    ((4,), (4, 7), {}, "must be 2-D"),
    ((2, 3, 4, 5), (5, 7), {}, "must be 2-D"),
    ((3, 4, 5), (2, 5, 7), {}, "batch sizes differ"),
    ((4, 5), (5, 7), {"out": FakeCAI((7, 4))}, "out must have shape"),
    ((4, 5), (5, 7), {"beta": 1.0}, "beta != 0 needs c"),
    ((4, 5), (5, 7), {"beta": 1.0, "c": FakeCAI((4, 7), "<i4")}, "c must be float32"),
    ((4, 5), (5, 7), {"beta": 1.0, "c": FakeCAI((4, 6))}, "c must have shape"),
    ((4, 5), (5, 7), {"precision": "bf16"}, "does not apply to float32"),
    ((4, 5), (5, 7), {"precision": "fp64"}, "does not apply to float32"),
])
def test_shape_and_precision_errors(no_gpu_work, a, b, kwargs, match):
    with pytest.raises(ValueError, match=match):
        gemmlab.matmul(FakeCAI(a), FakeCAI(b), **kwargs)


def test_dtype_errors(no_gpu_work):
    with pytest.raises(ValueError, match="unsupported input dtype"):
        gemmlab.matmul(FakeCAI((4, 5), "<f8"), FakeCAI((5, 7), "<f8"))
    with pytest.raises(ValueError, match="same dtype"):
        gemmlab.matmul(FakeCAI((4, 5), "<f4"), FakeCAI((5, 7), "<f2"))
    with pytest.raises(ValueError, match="tf32.*does not apply to float16"):
        gemmlab.matmul(FakeCAI((4, 5), "<f2"), FakeCAI((5, 7), "<f2"), precision="tf32")
    with pytest.raises(ValueError, match="out must be"):
        gemmlab.matmul(FakeCAI((4, 5)), FakeCAI((5, 7)), out=FakeCAI((4, 7), "<i4"))


def test_host_arrays_rejected(no_gpu_work):
    with pytest.raises(ValueError, match="on CPU .*needs CUDA"):
        gemmlab.matmul(HostDLPack(), FakeCAI((4, 4)))
    with pytest.raises(TypeError, match="DLPack"):
        gemmlab.matmul([[1.0]], [[1.0]])


@pytest.mark.parametrize("a, b, kwargs, error, match", [
    # bias: n values, float32 or the input dtype
    ((4, 5), (5, 7), {"bias": FakeCAI((4,))}, ValueError, r"bias must be 1-D with n = 7"),
    ((4, 5), (5, 7), {"bias": FakeCAI((1, 7))}, ValueError, "bias must be 1-D"),
    ((2, 4, 5), (5, 7), {"bias": FakeCAI((2, 7))}, ValueError, "bias must be 1-D"),
    ((4, 5), (5, 7), {"bias": FakeCAI((7,), "<f2")}, ValueError, "bias must be float32 for float32"),
    ((4, 5), (5, 7), {"bias": FakeCAI((7,), "<i4")}, ValueError, "bias must be float32"),
    ((4, 5), (5, 7), {"bias": [0.0] * 7}, TypeError, "bias: expected a torch tensor"),
    # activation
    ((4, 5), (5, 7), {"activation": "gelu_exact"}, ValueError, "unknown activation 'gelu_exact'"),
    ((4, 5), (5, 7), {"activation": "ReLU"}, ValueError, "unknown activation"),
    ((4, 5), (5, 7), {"activation": "none"}, ValueError, "unknown activation"),
    ((4, 5), (5, 7), {"activation": 1}, TypeError, "activation must be None or a string"),
    # out_dtype, and out's dtype against it
    ((4, 5), (5, 7), {"out_dtype": "float64"}, ValueError, "out_dtype must be float32, bfloat16"),
    ((4, 5), (5, 7), {"out_dtype": "int8"}, ValueError, "out_dtype must be"),
    ((4, 5), (5, 7), {"out_dtype": 2}, TypeError, "out_dtype must be None, a torch dtype"),
    ((4, 5), (5, 7), {"out": FakeCAI((4, 7)), "out_dtype": "float16"}, ValueError,
     "out_dtype=float16 contradicts out, which is float32"),
    ((4, 5), (5, 7), {"out": FakeCAI((4, 7), "<f2"), "out_dtype": "bf16"}, ValueError,
     "contradicts out"),
    # c in any result dtype, but of the result's shape
    ((4, 5), (5, 7), {"beta": 1.0, "c": FakeCAI((7,), "<f2")}, ValueError, "c must have shape"),
])
def test_epilogue_argument_errors(no_gpu_work, a, b, kwargs, error, match):
    with pytest.raises(error, match=match):
        gemmlab.matmul(FakeCAI(a), FakeCAI(b), **kwargs)


@pytest.mark.parametrize("kwargs", [
    {"bias": FakeCAI((7,))},
    {"bias": FakeCAI((7,)), "activation": "gelu"},
    {"activation": "relu"}, {"activation": "gelu_tanh"}, {"activation": "silu"},
    {"activation": "gelu_erf"}, {"activation": None},
    {"out_dtype": "bfloat16"}, {"out_dtype": "fp16"}, {"out_dtype": "float32"},
    {"out": FakeCAI((4, 7), "<f2"), "out_dtype": "float16"},
    {"out": FakeCAI((4, 7), "<f2")},
    {"beta": 1.0, "c": FakeCAI((4, 7), "<f2")},
    {"beta": 0.0, "c": FakeCAI((9, 9), "<i4")},   # beta == 0: c is not read, nor checked
])
def test_epilogue_arguments_accepted(monkeypatch, kwargs):
    """Valid arguments get past every check to the GPU (stopped there by a stand-in)."""
    class ReachedGpu(Exception):
        pass

    def reached():
        raise ReachedGpu
    monkeypatch.setattr(_foreign, "require_gpu", reached)
    with pytest.raises(ReachedGpu):
        gemmlab.matmul(FakeCAI((4, 5)), FakeCAI((5, 7)), **kwargs)


def test_16bit_bias_dtypes(no_gpu_work):
    """For 16-bit inputs the bias is float32 or the input dtype, not the other 16-bit dtype."""
    with pytest.raises(ValueError, match="bias must be float32 or float16 for float16 inputs"):
        gemmlab.matmul(FakeCAI((4, 5), "<f2"), FakeCAI((5, 7), "<f2"),
                       bias=FakeCAI((7,), "<i2"))


def test_checks_defaults():
    """The result's dtype: the input dtype unless out_dtype or out says otherwise."""
    from gemmlab import _checks
    check = _checks.check_problem
    assert check((4, 5), "bfloat16", (5, 7), "bfloat16", None)[5:] == ((4, 7), "bfloat16", 0)
    assert check((4, 5), "float16", (5, 7), "float16", None)[6] == "float16"
    assert check((4, 5), "float32", (5, 7), "float32", "tf32")[6] == "float32"
    assert check((4, 5), "bfloat16", (5, 7), "bfloat16", None, out_dtype="float32")[6] == "float32"
    assert check((4, 5), "bfloat16", (5, 7), "bfloat16", None, out=((4, 7), "float16"))[6] == "float16"
    assert check((2, 4, 5), "float16", (5, 7), "float16", None, bias=((7,), "float32"),
                 activation="gelu")[5:] == ((2, 4, 7), "float16", 3)
    codes = {a: check((4, 5), "float32", (5, 7), "float32", None, activation=a)[7]
             for a in (None, "relu", "gelu_tanh", "gelu", "silu")}
    assert codes == {None: 0, "relu": 1, "gelu_tanh": 2, "gelu": 3, "silu": 4}  # gemmlab::Activation


def test_checks_cached_like_uncached():
    """The remembered checks answer like check_problem, and a failing check raises every time."""
    import pytest
    from gemmlab import _checks
    cases = [((4, 5), "bfloat16", (5, 7), "bfloat16", None, None, None, 0.0, None, None, None),
             ((2, 4, 5), "float16", (5, 7), "float16", None, ((2, 4, 7), "float32"), ((2, 4, 7),
              "float16"), 0.5, ((7,), "float32"), "gelu", None),
             ((4, 5), "float32", (5, 7), "float32", "tf32", None, None, 0.0, None, "relu", None)]
    for args in cases:
        assert _checks.check_problem_cached(*args) == _checks.check_problem(*args)
        assert _checks.check_problem_cached(*args) == _checks.check_problem(*args)  # a hit
    bad = ((4, 5), "float32", (6, 7), "float32", None, None, None, 0.0, None, None, None)
    for _ in range(2):
        with pytest.raises(ValueError, match="inner dimensions"):
            _checks.check_problem_cached(*bad)
    assert bad not in _checks._PROBLEMS
    # an unhashable shape is checked as it is
    assert _checks.check_problem_cached([4, 5], "float32", [5, 7], "float32", None, None, None,
                                        0.0, None, None, None)[1:4] == (4, 7, 5)


@pytest.mark.skipif(gemmlab._C.device_count() > 0, reason="this machine has a GPU")
def test_no_gpu_is_a_clear_error():
    with pytest.raises(gemmlab.GemmlabError, match="no CUDA GPU") as info:
        gemmlab.matmul(FakeCAI((4, 5)), FakeCAI((5, 7)))
    assert isinstance(info.value, RuntimeError) and info.value.status == "NoDevice"
