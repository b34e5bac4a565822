"""moe: TFLOP/s of the expert FFNs against the per-expert PyTorch loop (reference()) and its
torch.compile, in bfloat16. Useful flops: tokens * top_k * (2 * d * F) * 2 GEMMs; the router GEMM and
the sort, gather and combine are overhead, not counted.

`python -m benchmarks moe` times two layers at 4096 tokens; `--sweep` times SWEEP (256 to 16384 tokens
for three layer shapes in bfloat16, two of them also in float16 and float32 at fewer sizes), each
point with the dense-GEMM bound as its roof, and checks TARGETS. The dense bound: the same flops as
two dense cuBLAS GEMMs over all tokens * top_k routed rows, (T*k x d) @ (d x F) then (T*k x F) @
(F x d), no routing at all.
"""

import math

import torch

from opgen_examples.ops.moe import moe, reference

from .sweep import Point, dtype_name, tensor
from .targets import Target, beats_eager_and_compile, host_within

# (tokens, hidden d, ffn F, experts E, top_k): a Mixtral-like layer (few large experts) and a
# fine-grained one (many small experts, where the loop's per-expert overhead dominates), at 4096
# tokens and at decoding's batches (1 and 16 tokens: the small-batch path, memory-bound on weights).
CASES = [(4096, 1024, 4096, 8, 2), (4096, 1024, 512, 64, 8), (1, 1024, 4096, 8, 2), (16, 1024, 512, 64, 8)]
LAYERS = {  # series name -> (d, F, E, top_k)
    "E=8 top-2 F=4096": (1024, 4096, 8, 2),
    "E=64 top-8 F=512": (1024, 512, 64, 8),
    "E=16 top-1 F=2048": (1024, 2048, 16, 1),
}
TOKENS = (256, 1024, 4096, 16384)
SIZE_LABEL = "tokens T (d=1024)"
SWEEP = [
    *(
        Point(f"{name} bfloat16", t, {"layer": layer, "dtype": torch.bfloat16}, key=t == 4096)
        for name, layer in LAYERS.items()
        for t in TOKENS
    ),
    *(
        Point(f"{name} {dtype_name(dtype)}", t, {"layer": LAYERS[name], "dtype": dtype})
        for name in ("E=8 top-2 F=4096", "E=64 top-8 F=512")
        for dtype in (torch.float16, torch.float32)
        for t in (1024, 4096)
    ),
]
HOST_NATIVE = "torch.mm"
TARGETS = [
    beats_eager_and_compile(),
    Target(
        "E=8 top-2 and E=64 top-8 (T=4096, bfloat16): >= 0.8x the dense-GEMM bound",
        "vs:dense_bound",
        0.8,
        {"series": ["E=8 top-2 F=4096 bfloat16", "E=64 top-8 F=512 bfloat16"], "size": 4096},
    ),
    host_within(3.0, HOST_NATIVE, limit="one token takes three kernels (the small-batch path); large batches a dozen"),
]


def make_inputs(tokens, hidden, ffn, experts, dtype=torch.bfloat16):
    def uniform(*shape, bound):
        return tensor(shape).uniform_(-bound, bound).to(dtype)

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


def dense_bound(tokens, hidden, ffn, top_k, dtype):
    """The expert GEMMs' flops as two dense GEMMs over all tokens * top_k routed rows."""
    rows = tensor((tokens * top_k, hidden), dtype)
    w1, w2 = tensor((hidden, ffn), dtype) / hidden**0.5, tensor((ffn, hidden), dtype) / ffn**0.5
    h = rows.new_empty(tokens * top_k, ffn)
    y = rows.new_empty(tokens * top_k, hidden)
    return lambda: (torch.mm(rows, w1, out=h), torch.mm(h, w2, out=y))


def measure(bench, size: int, layer: tuple, dtype: torch.dtype) -> None:
    hidden, ffn, experts, top_k = layer
    x, gate, w1, w2 = make_inputs(size, hidden, ffn, experts, dtype)
    bench.compare(
        "moe",
        f"T={size} d={hidden} F={ffn} E={experts} top{top_k} {dtype_name(dtype)}",
        flops=size * top_k * (2 * hidden * ffn) * 2,
        roof="dense_bound",
        ours=lambda: moe(x, gate, w1, w2, top_k),
        eager=lambda: reference(x, gate, w1, w2, top_k),
        dense_bound=dense_bound(size, hidden, ffn, top_k, dtype),
    )


def host_calls(numel: int) -> dict:
    x, gate, w1, w2 = make_inputs(numel, 8, 8, 2)  # bfloat16: the path that never syncs
    return {
        "ours": lambda: moe(x, gate, w1, w2, 1),
        "raw": lambda: torch.ops.examples.moe.default(x, gate, w1, w2, 1),
        "native": lambda: torch.mm(x, w1[0]),
    }
