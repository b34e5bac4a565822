"""moe: TFLOP/s of the expert FFNs against the per-expert PyTorch loop (reference()) and its
torch.compile, in bfloat16. Useful flops: tokens * top_k * (2 * d * F) * 2 GEMMs; the router GEMM and
the sort, gather and combine are overhead, not counted."""
import math

import torch

from opgen_examples.ops.moe import moe, reference

# (tokens, hidden d, ffn F, experts E, top_k): a Mixtral-like layer (few large experts) and a
# fine-grained one (many small experts, where the loop's per-expert overhead dominates).
CASES = [(4096, 1024, 4096, 8, 2), (4096, 1024, 512, 64, 8)]


def make_inputs(tokens, hidden, ffn, experts, dtype=torch.bfloat16):
    def uniform(*shape, bound):
        return torch.empty(shape, device="cuda").uniform_(-bound, bound).to(dtype)

    x = uniform(tokens, hidden, bound=1.0)
    gate = uniform(experts, hidden, bound=1.0)
    w1 = uniform(experts, ffn, hidden, bound=math.sqrt(3 / hidden))
    w2 = uniform(experts, hidden, ffn, bound=math.sqrt(3 / ffn))
    return x, gate, w1, w2


def run(bench) -> None:
    for tokens, hidden, ffn, experts, top_k in CASES:
        x, gate, w1, w2 = make_inputs(tokens, hidden, ffn, experts)
        # The loop's torch.where has a data-dependent size: torch.compile (not fullgraph) compiles
        # the pieces between graph breaks, which the harness's "compile" row times.
        bench.compare(
            "moe",
            f"T={tokens} d={hidden} F={ffn} E={experts} top{top_k} bf16",
            flops=tokens * top_k * (2 * hidden * ffn) * 2,
            flops_dtype=torch.bfloat16,
            ours=lambda: moe(x, gate, w1, w2, top_k),
            eager=lambda: reference(x, gate, w1, w2, top_k),
        )
