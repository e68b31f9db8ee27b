"""Exceptions: gemmlab's own statuses as GemmlabError (a RuntimeError)."""
from . import _C


class GemmlabError(RuntimeError):
    """A gemmlab call failed; ``status`` is the gemmlab Status name (e.g. "KernelUnsupported")."""

    def __init__(self, status, message):
        super().__init__(message)
        self.status = status


def raise_status(code=None):
    """Raise GemmlabError for a non-zero gemmlab Status code returned by gemmlab._C; code None:
    the status is the one last_error_message() names (calls that return no status)."""
    message = _C.last_error_message() or "(no message)"
    name = _C.status_name(code) if code is not None else message.split(":", 1)[0]
    if not message.startswith(name):
        message = f"{name}: {message}"
    raise GemmlabError(name, f"gemmlab: {message}")


_gpu_checked = False


def require_gpu():
    """RuntimeError with a clear message when there is no CUDA GPU (checked once, before GPU work)."""
    global _gpu_checked
    if _gpu_checked:
        return
    if _C.device_count() == 0:
        raise GemmlabError(
            "NoDevice",
            "gemmlab: no CUDA GPU is available (" + _C.last_error_message() + "); "
            "gemmlab.matmul runs on NVIDIA GPUs of compute capability 8.0 or newer")
    _gpu_checked = True
