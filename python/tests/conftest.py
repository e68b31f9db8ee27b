"""GPU tests carry @pytest.mark.gpu and are skipped, with the reason, where there is no usable
CUDA GPU (CI); everything else runs everywhere. Tests import the installed package (pip install .)."""
import pytest


def gpu_unavailable_reason():
    import gemmlab
    if gemmlab._C.device_count() == 0:
        return "no CUDA GPU (" + gemmlab._C.last_error_message() + ")"
    try:
        import torch
    except ImportError:
        return "the GPU tests need PyTorch, which is not installed"
    if not torch.cuda.is_available():
        return "torch sees no CUDA GPU"
    return None


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a CUDA GPU (skipped with the reason when there is none)")


def pytest_collection_modifyitems(config, items):
    reason = gpu_unavailable_reason()
    if reason is None:
        return
    skip = pytest.mark.skip(reason=reason)
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
