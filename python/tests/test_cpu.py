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
    ((4, 5), (5, 7), {"beta": 1.0, "c": FakeCAI((4, 7), "<f2")}, "c must be float32"),
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


def test_bias_and_activation_not_implemented():
    with pytest.raises(NotImplementedError, match="extended"):
        gemmlab.matmul(FakeCAI((4, 5)), FakeCAI((5, 7)), bias=FakeCAI((7,)))
    with pytest.raises(NotImplementedError):
        gemmlab.matmul(FakeCAI((4, 5)), FakeCAI((5, 7)), activation="relu")


@pytest.mark.skipif(gemmlab._C.device_count() > 0, reason="this machine has a GPU")
def test_no_gpu_is_a_clear_error():
    with pytest.raises(gemmlab.GemmlabError, match="no CUDA GPU") as info:
        gemmlab.matmul(FakeCAI((4, 5)), FakeCAI((5, 7)))
    assert isinstance(info.value, RuntimeError) and info.value.status == "NoDevice"
