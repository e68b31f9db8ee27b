"""gemmlab.torch.ColumnParallelLinear and RowParallelLinear: Megatron-style tensor-parallel
linear layers with sequence-parallel activations, on gemmlab.distributed. gemmlab.distributed
(and so gemmlab._dist and NCCL) is imported at the first layer made, not at `import gemmlab`."""
import math

import torch

from . import _checks


def _distributed():
    from . import distributed
    return distributed


def _precision(x):
    if x.dtype == torch.float32 and torch.backends.cuda.matmul.allow_tf32:
        return "tf32"
    return None


class _ParallelLinear(torch.nn.Module):
    def __init__(self, in_features, out_features, bias, activation, group):
        super().__init__()
        _checks.activation_code(activation)  # TypeError / ValueError before anything else
        dist = _distributed()
        _, self.ranks, self.rank = dist._group(group)
        self.in_features, self.out_features = in_features, out_features
        self.activation, self.group = activation, group

    def extra_repr(self):
        text = (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}, rank={self.rank} of {self.ranks}")
        return text if self.activation is None else f"{text}, activation={self.activation!r}"

    def _init(self, fan_in):
        """nn.Linear's initialization for the unsharded layer: uniform(-1/sqrt(fan_in), ...) for
        the weight (kaiming_uniform_ with a = sqrt(5)) and the bias."""
        bound = 1.0 / math.sqrt(fan_in) if fan_in > 0 else 0.0
        with torch.no_grad():
            self.weight.uniform_(-bound, bound)
            if self.bias is not None:
                self.bias.uniform_(-bound, bound)


class ColumnParallelLinear(_ParallelLinear):
    """Column-parallel linear layer with a sequence-parallel input (Megatron's
    ColumnParallelLinear after a sequence-parallel region): ``y_r = act(X @ W_r^T + b_r)``.

    The layer is ``in_features -> out_features`` on P ranks (the process group ``group``; None:
    the default group). Rank r holds ``weight`` (n_r x in_features, its rows of the full weight:
    n_r = shard_rows(out_features, P, r), starting at shard_offset(out_features, P, r)) and
    ``bias`` (n_r values). forward(x) takes the rank's row shard of the input, x (rows_r x
    in_features, or (s_r, ..., in_features) whose leading dimensions are flattened) and returns
    the rank's columns for all rows, (rows x n_r) (or (s, ..., n_r)), through
    gemmlab.distributed.all_gather_matmul: the input is all-gathered while the GEMM runs. Rows
    follow the shard rule (rows // P each, the first rows % P ranks one more); forward(x, rows=)
    names the total and saves a small collective per call.

    activation: None, "relu", "gelu", "gelu_tanh" or "silu", fused into the GEMM. float32 runs
    "tf32" when torch.backends.cuda.matmul.allow_tf32 is True. Each rank initializes its shard as
    nn.Linear would initialize the whole layer, from its own random state; ``from_linear`` shards
    an existing nn.Linear (the same on every rank). Forward only: call it under torch.no_grad()
    or torch.inference_mode() (gradients raise RuntimeError). Every rank must call forward in
    the same order.
    """

    def __init__(self, in_features, out_features, bias=True, activation=None, group=None,
                 dtype=None, device=None):
        super().__init__(in_features, out_features, bias, activation, group)
        dist = _distributed()
        self.local_out_features = dist.shard_rows(out_features, self.ranks, self.rank)
        kw = {"dtype": dtype, "device": device}
        self.weight = torch.nn.Parameter(torch.empty(self.local_out_features, in_features, **kw))
        self.bias = torch.nn.Parameter(torch.empty(self.local_out_features, **kw)) if bias else None
        self._init(in_features)

    @classmethod
    def from_linear(cls, linear, activation=None, group=None):
        """This rank's shard of an nn.Linear (its weight's rows and bias values of this rank)."""
        layer = cls(linear.in_features, linear.out_features, linear.bias is not None, activation,
                    group, linear.weight.dtype, linear.weight.device)
        begin = _distributed().shard_offset(linear.out_features, layer.ranks, layer.rank)
        end = begin + layer.local_out_features
        with torch.no_grad():
            layer.weight.copy_(linear.weight[begin:end])
            if linear.bias is not None:
                layer.bias.copy_(linear.bias[begin:end])
        return layer

    def forward(self, x, rows=None):
        lead = x.shape[1:-1]
        y = _distributed().all_gather_matmul(
            x.reshape(-1, self.in_features), self.weight.t(), group=self.group, rows=rows,
            bias=self.bias, activation=self.activation, precision=_precision(x))
        if x.dim() <= 2:
            return y
        return y.reshape(-1, *lead, self.local_out_features)


class RowParallelLinear(_ParallelLinear):
    """Row-parallel linear layer with a sequence-parallel output (Megatron's RowParallelLinear
    before a sequence-parallel region): ``y = act(sum_r X_r @ W_r^T + bias)``, reduce-scattered
    by rows.

    The layer is ``in_features -> out_features`` on P ranks (the process group ``group``; None:
    the default group). Rank r holds ``weight`` (out_features x k_r, its columns of the full
    weight: k_r = shard_rows(in_features, P, r), starting at shard_offset(in_features, P, r)) and
    the whole ``bias`` (out_features values, the same on every rank, added once after the sum).
    forward(x) takes all rows of the rank's slice of the input features, x (m x k_r, e.g. a
    ColumnParallelLinear's output; or (s, ..., k_r), flattened) and returns the rank's rows of the
    result, (shard_rows(m, P, r) x out_features) (for more than 2 dimensions, reshaped to
    (-1, ..., out_features), which needs the rank's rows to split evenly), through
    gemmlab.distributed.matmul_reduce_scatter: each partial product travels while the next one is
    computed, and gemmlab sums them in rank order.

    activation: as in ColumnParallelLinear (applied after the sum and the bias); partial_dtype:
    None (float32 partials) or bfloat16 / float16. Initialization, from_linear, float32 / tf32,
    forward only and the call order: as in ColumnParallelLinear.
    """

    def __init__(self, in_features, out_features, bias=True, activation=None, group=None,
                 dtype=None, device=None, partial_dtype=None):
        super().__init__(in_features, out_features, bias, activation, group)
        dist = _distributed()
        dist._partial_dtype(partial_dtype)
        self.partial_dtype = partial_dtype
        self.local_in_features = dist.shard_rows(in_features, self.ranks, self.rank)
        kw = {"dtype": dtype, "device": device}
        self.weight = torch.nn.Parameter(torch.empty(out_features, self.local_in_features, **kw))
        self.bias = torch.nn.Parameter(torch.empty(out_features, **kw)) if bias else None
        self._init(in_features)

    @classmethod
    def from_linear(cls, linear, activation=None, group=None, partial_dtype=None):
        """This rank's shard of an nn.Linear (its weight's columns of this rank, the whole bias)."""
        layer = cls(linear.in_features, linear.out_features, linear.bias is not None, activation,
                    group, linear.weight.dtype, linear.weight.device, partial_dtype)
        begin = _distributed().shard_offset(linear.in_features, layer.ranks, layer.rank)
        end = begin + layer.local_in_features
        with torch.no_grad():
            layer.weight.copy_(linear.weight[:, begin:end])
            if linear.bias is not None:
                layer.bias.copy_(linear.bias)
        return layer

    def forward(self, x):
        lead = x.shape[1:-1]
        y = _distributed().matmul_reduce_scatter(
            x.reshape(-1, self.local_in_features), self.weight.t(), group=self.group,
            bias=self.bias, activation=self.activation, precision=_precision(x),
            partial_dtype=self.partial_dtype)
        if x.dim() <= 2:
            return y
        return y.reshape(-1, *lead, self.out_features)
