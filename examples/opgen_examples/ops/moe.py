"""moe: a mixture-of-experts FFN layer (top-k routing), kernels in csrc/moe/. Forward only."""
import math

import torch
import torch.nn.functional as F
from torch import Tensor

from .._declare import TensorArg, declare
from .._error_model import carried_error, rounding_error, sum_error
from ._gelu_error import EPILOGUE_TAIL_ERROR, GELU_MAX_SLOPE

__all__ = ["moe"]


def reference(x: Tensor, gate_weight: Tensor, w1: Tensor, w2: Tensor, top_k: int) -> Tensor:
    """moe as a plain PyTorch loop over experts: the tests compare against it in float64, the
    benchmark times it."""
    router_dtype = torch.float64 if x.dtype == torch.float64 else torch.float32
    logits = x.to(router_dtype) @ gate_weight.to(router_dtype).t()
    top, experts = logits.topk(top_k, dim=-1)
    p = top.softmax(dim=-1)
    y = torch.zeros(x.shape, dtype=router_dtype, device=x.device)
    for e in range(gate_weight.shape[0]):
        tokens, slots = torch.where(experts == e)
        if tokens.numel() == 0:
            continue
        h = F.gelu(x[tokens] @ w1[e].t(), approximate="tanh")
        y.index_add_(0, tokens, (h @ w2[e].t()).to(router_dtype) * p[tokens, slots, None])
    return y.to(x.dtype)


def error_bound(dtype: torch.dtype, x: Tensor, gate_weight: Tensor, w1: Tensor, w2: Tensor, top_k: int) -> Tensor:
    """What a correct moe adds to the rounding of its output (see _error_model.py): each expert's first
    product (d terms) through GELU (16-bit: cuBLASLt's epilogue), h stored in the dtype, the second
    product (F terms) carrying h's error, its output stored in the dtype, and the weighted sum over
    the token's top_k slots. An output near zero is the cancellation of terms this large."""
    hidden, ffn = x.shape[1], w1.shape[1]
    top, experts = (x @ gate_weight.t()).topk(top_k, dim=-1)
    p = top.softmax(dim=-1)
    bound, weighted = torch.zeros_like(x), torch.zeros_like(x)
    tail = EPILOGUE_TAIL_ERROR if dtype in (torch.float16, torch.bfloat16) else 0.0
    for e in range(gate_weight.shape[0]):
        tokens, slots = torch.where(experts == e)
        if tokens.numel() == 0:
            continue
        rows = x[tokens]
        h = F.gelu(rows @ w1[e].t(), approximate="tanh")
        z_error = sum_error(rows.abs() @ w1[e].abs().t(), hidden, dtype)
        h_error = GELU_MAX_SLOPE * z_error + tail + rounding_error(h, dtype)
        out = h @ w2[e].t()
        out_error = (carried_error(h_error.square() @ w2[e].square().t())
                     + sum_error(h.abs() @ w2[e].abs().t(), ffn, dtype) + rounding_error(out, dtype))
        bound.index_add_(0, tokens, out_error * p[tokens, slots, None])
        weighted.index_add_(0, tokens, out.abs() * p[tokens, slots, None])
    return bound + sum_error(weighted, top_k, dtype)


def fake(x: Tensor, gate_weight: Tensor, w1: Tensor, w2: Tensor, top_k: int) -> Tensor:
    """The result's shape, for torch.compile and opcheck."""
    torch._check(x.dim() == 2, lambda: f"x must have 2 dimensions (tokens, hidden), got shape {tuple(x.shape)}")
    torch._check(gate_weight.dim() == 2 and gate_weight.shape[1] == x.shape[1],
                 lambda: f"gate_weight must have shape (experts, {x.shape[1]}), got {tuple(gate_weight.shape)}")
    experts = gate_weight.shape[0]
    torch._check(w1.dim() == 3 and w1.shape[0] == experts and w1.shape[2] == x.shape[1],
                 lambda: f"w1 must have shape (experts, ffn, hidden), got {tuple(w1.shape)}")
    torch._check(w2.dim() == 3 and w2.shape[0] == experts and w2.shape[1] == x.shape[1] and w2.shape[2] == w1.shape[1],
                 lambda: f"w2 must have shape (experts, hidden, ffn), got {tuple(w2.shape)}")
    torch._check(1 <= top_k <= experts, lambda: f"top_k must be between 1 and {experts}, got {top_k}")
    return x.new_empty(x.shape)


def _backward(ctx, grad: Tensor):
    raise RuntimeError(
        "moe is forward-only: it has no backward. For training, use opgen_examples.ops.moe.reference "
        "(differentiable) or run moe under torch.no_grad()."
    )


_EXPERTS, _FFN = 8, 24


def _tokens_hidden(shape: tuple) -> tuple:
    """(tokens, hidden) for the conformance suite's case shape: leading dims merged into tokens; a
    1-D (n,) case is n tokens of hidden size 8."""
    shape = tuple(shape)
    if len(shape) >= 2:
        return (math.prod(shape[:-1]), shape[-1])
    return (shape[0] if shape else 1, 8)


def without_near_ties(x: Tensor, gate_weight: Tensor, top_k: int, margin: float = 1e-3) -> None:
    """Redraw (in place) the rows of x whose top_k-th and next-best logits are within `margin`
    (relative) of each other. There the op's float32 router and a float64 reference may pick
    different experts: a jump of the exact function at a tie, not an error of the op. Seen: 20000
    tokens, 64 experts, top 6, one token's row off by 0.03, for some draws."""
    if top_k >= gate_weight.shape[0] or x.numel() == 0:
        return
    for _ in range(100):
        top = (x.double() @ gate_weight.double().t()).topk(top_k + 1, dim=-1).values
        near = top[:, top_k - 1] - top[:, top_k] < margin * top.abs().amax(dim=-1).clamp_min(1.0)
        if not near.any():
            return
        fresh = torch.rand(int(near.sum()), x.shape[1], dtype=torch.float64, device=x.device) * 2 - 1
        x[near] = fresh.to(x.dtype)
    raise AssertionError("could not draw inputs without near-ties in the routing")


# The routing is expressed by the drawn gate weights; E = 8 experts with ffn 24, top_k = 2. The
# weights' ranges keep every intermediate O(1) for the hidden sizes in `shapes` (test_moe.py scales
# them to each size, and covers other E, ffn and top_k, E up to 256).
SPEC = declare(
    "moe(Tensor x, Tensor gate_weight, Tensor w1, Tensor w2, int top_k) -> Tensor",
    kind="custom",  # host code csrc/moe/: forward_cpu in moe.cpp, forward_cuda in moe_cuda.cu
    kernels={"CPU": "forward_cpu", "CUDA": "forward_cuda"},
    reference=reference,
    fake=fake,
    error_bound=error_bound,
    backward=_backward,  # so that backward through moe fails loudly instead of silently giving no gradient
    doc="""Mixture of experts: each token goes through the top_k of E expert FFNs, weighted by its router.

    x (T, d), gate_weight (E, d), w1 (E, F, d), w2 (E, d, F), 1 <= top_k <= E; returns y (T, d):

        logits = x @ gate_weight^T                       (T, E), in float32 (float64 for float64 x)
        experts, top = the top_k logits of each token    (as torch.topk)
        p = softmax(top)                                 over the token's top_k logits only, as Mixtral
        y[t] = sum_k p[t, k] * gelu_tanh(x[t] @ w1[e]^T) @ w2[e]^T    for e = experts[t, k]

    The router runs in float32 so that bfloat16 rounding cannot flip near-tied expert choices.
    Expert outputs are rounded to x's dtype, then summed in float32 (float64) and rounded once.

    float32, float16, bfloat16, float64 on CPU (a loop over experts) and CUDA (E <= 256). On CUDA,
    small batches (decoding) take three kernels: routing, then the two products a warp per weight
    row and the slots summed in order, never syncing. Larger ones: a routing kernel, a counting sort
    of the (token, expert) pairs by expert, the expert GEMMs, a gather-combine; bfloat16 and float16
    on Hopper with hidden and ffn sizes that are multiples of 8 take two grouped GEMMs and never sync
    (float16 where the build has our CUTLASS ones), otherwise each expert gets its own cuBLAS GEMMs,
    which costs one device-to-host copy of the expert sizes per call (so no CUDA graph capture on
    that path).
    Traceable by torch.compile(fullgraph=True). Forward only: backward raises.
    """,
    args={"x": TensorArg(shape=_tokens_hidden, domain=(-1.0, 1.0)),
          "gate_weight": TensorArg(shape=lambda s: (_EXPERTS, _tokens_hidden(s)[1]), domain=(-1.0, 1.0)),
          "w1": TensorArg(shape=lambda s: (_EXPERTS, _FFN, _tokens_hidden(s)[1]), domain=(-0.3, 0.3)),
          "w2": TensorArg(shape=lambda s: (_EXPERTS, _tokens_hidden(s)[1], _FFN), domain=(-0.35, 0.35)),
          "top_k": 2},
    differentiable=(),  # forward only: test_moe.py checks that backward raises
    cuda_graphs=False,  # larger batches off the grouped GEMMs copy the expert sizes to the host: cudagraph_unsafe
    # (tokens, hidden): one token, odd sizes, multiples of 8 (the CUDA combine's vector path), none.
    shapes=[(1, 16), (7, 33), (129, 64), (129, 40), (0, 16), (1000, 32)],
    condition=lambda args: without_near_ties(args["x"], args["gate_weight"], args["top_k"]),
)
moe = SPEC.function
