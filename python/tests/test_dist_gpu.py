"""gemmlab.distributed on GPUs: dist_worker.py under torchrun, with 2 ranks where there are two
GPUs (skipped, with the reason, on fewer) and with 1 rank on one GPU. NVLink multicast stays off
(NCCL_NVLS_ENABLE=0)."""
import os
import shutil
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed")
import gemmlab.distributed as gd  # noqa: E402

pytestmark = pytest.mark.gpu

WORKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "dist_worker.py")


def _unavailable():
    ok, reason = gd.available()
    if not ok:
        return reason
    if not torch.distributed.is_nccl_available():
        return "this PyTorch build has no NCCL backend"
    return None


def _torchrun(ranks, timeout=900):
    reason = _unavailable()
    if reason:
        pytest.skip(reason)
    env = dict(os.environ, NCCL_NVLS_ENABLE="0", OMP_NUM_THREADS="1")
    torchrun = shutil.which("torchrun")
    cmd = ([torchrun] if torchrun else [sys.executable, "-m", "torch.distributed.run"])
    cmd += ["--standalone", f"--nproc-per-node={ranks}", WORKER]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"{' '.join(cmd)} failed ({proc.returncode}):\n{output[-20000:]}"
    assert f"dist_worker: {ranks} rank(s), 0 failure(s)" in proc.stdout, output[-20000:]


def test_one_rank():
    _torchrun(1)


def test_two_ranks():
    count = torch.cuda.device_count()
    if count < 2:
        pytest.skip(f"needs 2 GPUs, this machine has {count}: the 2-rank test of "
                    "gemmlab.distributed did not run")
    _torchrun(2)
