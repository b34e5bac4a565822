"""moe: what is special to this op (values against the per-expert PyTorch loop in float64 for other
numbers of experts, ffn sizes and top_k, up to 256 experts, weights scaled to each size; weights in
other layouts; known routings; CUDA determinism, stream and sync behaviour; forward-only; the shape
checks). The standard checks (the reference on every layout, dtype and shape in SPEC, opcheck,
torch.compile, bad input, streams, devices, threads) run from its SPEC (opgen_examples/ops/moe.py,
8 experts, top 2) in test_opgen_conformance.py.
"""

import math

import pytest
import torch

import opgen_testing as testing
from opgen_examples import _extension
from opgen_examples.ops.moe import SPEC, moe, reference, without_near_ties

OP = torch.ops.examples.moe.default

# (tokens, hidden, ffn, experts, top_k). Hidden and ffn sizes that are and are not multiples of 8
# (on CUDA: the combine's 16-byte vector path or its scalar path; for bfloat16 and float16 on Hopper,
# the grouped GEMMs or the per-expert GEMMs); top_k of 1, 2 and all experts; E past one warp (32) and at the CUDA
# limit (256); enough pairs for several 256-pair sort segments.
CASES = [
    (1, 16, 24, 1, 1),
    (7, 33, 65, 3, 2),
    (7, 8, 8, 3, 3),
    (129, 64, 48, 8, 2),
    (129, 33, 20, 8, 1),
    (129, 40, 17, 8, 8),
    (0, 16, 8, 3, 2),
    (50, 24, 16, 40, 33),
    (1000, 32, 16, 8, 2),
    (300, 16, 8, 256, 4),
    (64, 256, 96, 64, 8),  # on CUDA the most tokens of the small-batch path, and one past it
    (65, 256, 96, 64, 8),
]


def make_inputs(tokens, hidden, ffn, experts, dtype=torch.float32, device="cpu", layout="contiguous", top_k=None):
    """Random inputs scaled so that every intermediate is O(1), x in `layout`, weights contiguous.
    Given top_k, no token is near a routing tie (see without_near_ties)."""
    x = testing.make_tensor((tokens, hidden), dtype, device, layout, low=-1, high=1)
    gate = testing.make_tensor((experts, hidden), dtype, device, low=-1, high=1)
    b1, b2 = math.sqrt(3 / hidden), math.sqrt(3 / max(ffn, 1))
    w1 = testing.make_tensor((experts, ffn, hidden), dtype, device, low=-b1, high=b1)
    w2 = testing.make_tensor((experts, hidden, ffn), dtype, device, low=-b2, high=b2)
    if top_k is not None:
        without_near_ties(x, gate, top_k)  # where the float64 reference may rightly route otherwise
    return x, gate, w1, w2


def expected_of(x, gate, w1, w2, top_k):
    return reference(x.double(), gate.double(), w1.double(), w2.double(), top_k)


def assert_moe_close(actual, inputs, top_k):
    """actual against the float64 reference within moe's error model (SPEC.error_bound: an output near
    zero is the cancellation of larger terms, and carries their rounding errors; seen without it: 1
    of 1.28M float32 elements 1.007e-06 off where atol + rtol * |y| allowed 1.006e-06)."""
    args = dict(zip(SPEC.args, (*inputs, top_k)))  # named as the declaration names them
    bound = testing.error_bound(SPEC, args, actual.dtype)
    testing.assert_matches(SPEC, actual, expected_of(*inputs, top_k), actual.dtype, bound=bound)


@pytest.mark.parametrize("device", testing.DEVICES)
@pytest.mark.parametrize("dtype", testing.FLOAT_DTYPES)
@pytest.mark.parametrize("case", CASES, ids=lambda c: "T{}-d{}-F{}-E{}-k{}".format(*c))
def test_forward_matches_reference(case, dtype, device):
    *sizes, top_k = case
    inputs = make_inputs(*sizes, dtype=dtype, device=device, top_k=top_k)
    assert_moe_close(moe(*inputs, top_k), inputs, top_k)


@pytest.mark.parametrize("device", testing.DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("layout", testing.LAYOUTS)
def test_non_contiguous_inputs(layout, dtype, device):
    x, gate, w1, w2 = make_inputs(129, 32, 24, 8, dtype=dtype, device=device, layout=layout, top_k=2)
    # The weights as transposed, strided and misaligned (offset by one element) views.
    gate_t = gate.t().contiguous().t()
    w1_t = w1.transpose(1, 2).contiguous().transpose(1, 2)
    w2_s = torch.cat([w2, w2], dim=2)[:, :, ::2].copy_(w2)
    w2_m = torch.cat([w2.new_zeros(1), w2.flatten()])[1:].view(w2.shape)
    expected = expected_of(x, gate, w1, w2, 2)
    testing.assert_close(moe(x, gate_t, w1_t, w2_s, 2), expected, dtype)
    testing.assert_close(moe(x, gate, w1, w2_m, 2), expected, dtype)


@pytest.mark.parametrize("device", testing.DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_identical_experts_give_the_plain_ffn(dtype, device):
    # With every expert the same, routing only splits a weight of 1: y = gelu(x @ w1^T) @ w2^T.
    x, gate, w1, w2 = make_inputs(77, 24, 40, 1, dtype=dtype, device=device)
    gate = testing.make_tensor((6, 24), dtype, device)
    w1, w2 = w1.expand(6, -1, -1), w2.expand(6, -1, -1)
    ffn = torch.nn.functional.gelu(x.double() @ w1[0].double().t(), approximate="tanh") @ w2[0].double().t()
    testing.assert_close(moe(x, gate, w1, w2, 3), ffn, dtype)


@pytest.mark.parametrize("device", testing.DEVICES)
def test_top_k_chooses_the_largest_logits(device):
    # x = identity rows, so token t's logits are gate[:, t]; w1 = I and w2[e] = (e + 1) I, so expert e
    # outputs (e + 1) * gelu(x[t]). Each token's top two logits are 3 and 2, at known experts.
    x = torch.eye(4, device=device)
    gate = torch.tensor([[0.0, 3, 1, 0], [1, 0, 3, 2], [2, 2, 0, 3], [3, 0, 2, 1], [0, 1, 0, 0]], device=device)
    w1 = torch.eye(4, device=device).repeat(5, 1, 1)
    w2 = torch.stack([(e + 1) * torch.eye(4, device=device) for e in range(5)])
    first, second = torch.tensor([[3, 2], [0, 2], [1, 3], [2, 1]], device=device).unbind(1)
    p_first = 1 / (1 + math.exp(-1))  # softmax([3, 2])[0]
    scale = p_first * (first + 1) + (1 - p_first) * (second + 1)
    expected = torch.nn.functional.gelu(x, approximate="tanh") * scale[:, None]
    torch.testing.assert_close(moe(x, gate, w1, w2, 2), expected)


@testing.requires_cuda
def test_cuda_many_tokens_and_deterministic():
    # Thousands of 256-pair segments, several experts, bitwise the same on a second run.
    inputs = make_inputs(20000, 64, 32, 64, dtype=torch.float32, device="cuda", top_k=6)
    y = moe(*inputs, 6)
    assert_moe_close(y, inputs, 6)
    assert torch.equal(y, moe(*inputs, 6))


@testing.requires_cuda
@pytest.mark.parametrize(
    "tokens, experts, top_k, library",
    [(4096, 8, 2, False), (40000, 256, 8, True)],
    ids=["router-on-cores-one-block-scan", "cublas-router-cumsum"],
)
def test_cuda_routing_and_scan_paths(tokens, experts, top_k, library):
    """Larger batches route on CUDA cores (route_logits_kernel) and scan the expert histograms in one
    block (scan_kernel) while those are small; past E * d = 2^14 gate elements or T * E * d = 2^29
    multiply-adds the router is a cuBLAS GEMM and route_kernel, past 2^18 histogram entries the scan
    is at::cumsum's."""
    inputs = make_inputs(tokens, 64, 16, experts, dtype=torch.float32, device="cuda", top_k=top_k)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as profile:
        y = moe(*inputs, top_k)
        torch.cuda.synchronize()
    kernels = [event.name for event in profile.events() if event.device_type == torch.autograd.DeviceType.CUDA]
    assert any("moe::route_logits_kernel" in name for name in kernels) == (not library), kernels
    assert any("moe::route_kernel" in name for name in kernels) == library, kernels
    assert any("moe::scan_kernel" in name for name in kernels) == (not library), kernels
    assert_moe_close(y, inputs, top_k)


@testing.requires_cuda
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("tokens", [300, 9000], ids=["block-per-token", "warp-per-token"])
@pytest.mark.parametrize("experts, top_k", [(8, 2), (40, 5), (256, 8)])
def test_cuda_router_on_cores_both_launch_shapes(experts, top_k, tokens, dtype):
    """route_logits_kernel gives a token a block while those blocks fit in one wave of the GPU and
    a warp beyond (9000 tokens: more than any GPU holds), with 1, 2 and 8 logits a lane (E up to 256,
    E * d within the 2^14 gate elements of the router on cores): the same routing as torch.topk."""
    inputs = make_inputs(tokens, 64, 16, experts, dtype=dtype, device="cuda", top_k=top_k)
    assert_moe_close(moe(*inputs, top_k), inputs, top_k)


@testing.requires_cuda
def test_cuda_runs_on_the_current_stream():
    inputs = make_inputs(4096, 128, 256, 8, dtype=torch.bfloat16, device="cuda", top_k=2)
    expected = expected_of(*inputs, 2)
    y = testing.call_on_side_stream(lambda *tensors: moe(*tensors, 2), *inputs)
    testing.assert_close(y, expected, torch.bfloat16)


@testing.requires_cuda
@pytest.mark.parametrize("dtype", testing.FLOAT_DTYPES)
@pytest.mark.parametrize("hidden", [256, 33], ids=["aligned", "odd"])
def test_cuda_small_batches_never_sync_and_repeat_bitwise(hidden, dtype):
    """Small batches (decoding), in every dtype, take the small-batch path (csrc/moe/decode.cuh): no
    host sync, the same bits on a second run; 16-byte loads where every row is aligned, else one
    element at a time."""
    inputs = make_inputs(16, hidden, 40, 64, dtype=dtype, device="cuda", top_k=6)
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        y = moe(*inputs, 6)
        again = moe(*inputs, 6)
    finally:
        torch.cuda.set_sync_debug_mode("default")
    testing.assert_close(y, expected_of(*inputs, 6), dtype)
    assert torch.equal(y, again)


def ours_grouped_gemms():
    """Whether this build runs our CUTLASS grouped GEMMs (hopper_ffn.cu) on this GPU: CUTLASS's headers
    were found when it was built, it carries sm_90a code, and the GPU is a Hopper."""
    info = _extension.build_info() or {}
    return (
        bool(info.get("cutlass"))
        and "9.0a" in (info.get("cuda_arch_list") or "")
        and torch.cuda.get_device_capability()[0] == 9
    )


@testing.requires_cuda
def test_cuda_grouped_gemm_path_never_syncs():
    """bfloat16 on Hopper, and float16 where our grouped GEMMs run (torch's take bfloat16 only), read
    the expert slices' ends on the device; float32's per-expert GEMMs copy them to the host."""
    if torch.cuda.get_device_capability()[0] != 9:
        pytest.skip("the grouped-GEMM path is for Hopper (sm_90)")
    grouped = [torch.bfloat16] + ([torch.float16] if ours_grouped_gemms() else [])
    inputs = {dtype: make_inputs(512, 64, 128, 8, dtype=dtype, device="cuda", top_k=2) for dtype in grouped}
    fp32 = make_inputs(512, 64, 128, 8, dtype=torch.float32, device="cuda")
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        ys = {dtype: moe(*inputs[dtype], 2) for dtype in grouped}  # grouped GEMMs: no device-to-host copy
        with pytest.raises(RuntimeError, match="synchroniz"):
            moe(*fp32, 2)  # per-expert GEMMs: one copy of the expert sizes
    finally:
        torch.cuda.set_sync_debug_mode("default")
    for dtype, y in ys.items():
        testing.assert_close(y, expected_of(*inputs[dtype], 2), dtype)


@testing.requires_cuda
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("tokens, experts, top_k", [(100, 64, 2), (777, 16, 3), (4096, 8, 2)])
def test_cuda_hopper_expert_ffn_fuses_the_gelu(tokens, experts, top_k, dtype):
    """bfloat16 and float16 on Hopper: the expert FFN runs as our CUTLASS grouped GEMMs, the GELU in
    the first one's epilogue, where the build has them (its build info: CUTLASS's headers found,
    sm_90a code); else bfloat16 as torch's grouped GEMMs and a GELU pass, float16 as per-expert
    GEMMs with cuBLASLt's GELU epilogue. Experts with no rows and slices of any length."""
    if torch.cuda.get_device_capability()[0] != 9:
        pytest.skip("the grouped-GEMM path is for Hopper (sm_90)")
    ours = ours_grouped_gemms()
    inputs = make_inputs(tokens, 256, 512, experts, dtype=dtype, device="cuda", top_k=top_k)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as profile:
        y = moe(*inputs, top_k)
        torch.cuda.synchronize()
    kernels = [event.name for event in profile.events() if event.device_type == torch.autograd.DeviceType.CUDA]
    fused = any("GELU_taylor" in name for name in kernels)
    gelu_pass = any("gelu" in name.lower() and "cutlass" not in name.lower() for name in kernels)
    assert fused == ours, kernels
    if dtype == torch.bfloat16:  # (float16 without ours: cuBLASLt's GELU epilogue, whatever its kernels' names)
        assert gelu_pass == (not ours), kernels  # torch's grouped GEMMs, then a GELU pass
    assert_moe_close(y, inputs, top_k)


@testing.requires_cuda
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize(
    "tokens, choose",
    [
        (256, lambda t: t % 4),  # 64 rows an expert: whole tiles, no padding
        (257, lambda t: t % 4),  # one row more: expert 0 pads a second tile
        (300, lambda t: 0),  # every row to one expert, the other three empty
        (200, lambda t: 3 if t % 7 else 1),  # empty experts before, between and after
    ],
    ids=["whole-tiles", "one-row-over", "one-expert", "empty-between"],
)
def test_cuda_expert_tiles_of_any_fill(tokens, choose, dtype):
    """Known routings (top-1, each token's chosen logit far above the rest) through the large-batch
    path: on Hopper, the rows in 64-row tiles of one expert each, whole, padded and empty."""
    experts, hidden, ffn = 4, 64, 128
    x, gate, w1, w2 = make_inputs(tokens, hidden, ffn, experts, dtype=dtype, device="cuda")
    gate = torch.zeros_like(gate)
    gate[:, :experts] = torch.eye(experts, dtype=dtype, device="cuda")
    for t in range(tokens):
        x[t, :experts] = 0
        x[t, choose(t)] = 4.0
    y = moe(x, gate, w1, w2, 1)
    assert_moe_close(y, (x, gate, w1, w2), 1)


@testing.requires_cuda
def test_cuda_calls_of_other_sizes_after_each_other():
    """Calls of other sizes with as many experts, one after another, get the same buffers back
    (bfloat16 on Hopper: each tile's expert and the count of tiles, written on the device): each must
    compute its own sizes, nothing left from the call before."""
    for tokens, hidden, ffn in ((512, 256, 512), (300, 128, 256), (512, 256, 512), (1000, 64, 1024)):
        inputs = make_inputs(tokens, hidden, ffn, 8, dtype=torch.bfloat16, device="cuda", top_k=2)
        assert_moe_close(moe(*inputs, 2), inputs, 2)


@pytest.mark.parametrize("device", testing.DEVICES)
def test_opcheck(device):
    for case in [(7, 33, 65, 3, 3), (0, 16, 8, 3, 1)]:
        *sizes, top_k = case
        testing.check_opcheck(OP, *make_inputs(*sizes, device=device), top_k)


@pytest.mark.parametrize("device", testing.DEVICES)
@pytest.mark.parametrize("needs_grad", ["x", "gate_weight", "w1", "w2"])
def test_backward_raises_forward_only(needs_grad, device):
    inputs = dict(zip(["x", "gate_weight", "w1", "w2"], make_inputs(5, 8, 8, 3, device=device, top_k=2)))
    expected = expected_of(*inputs.values(), 2)
    inputs[needs_grad].requires_grad_()
    y = moe(*inputs.values(), 2)  # the forward itself works with grad-requiring inputs
    testing.assert_close(y.detach(), expected)
    with pytest.raises(RuntimeError, match="moe is forward-only"):
        y.sum().backward()


@pytest.mark.parametrize("device", testing.DEVICES)
def test_rejects_bad_input(device):
    x, gate, w1, w2 = make_inputs(5, 8, 6, 3, device=device)
    bad = [
        ((x.long(), gate, w1, w2, 1), "x must be a floating-point tensor"),
        ((x, gate.double(), w1, w2, 1), "gate_weight and x must have the same dtype"),
        ((x, gate, w1.half(), w2, 1), "w1 and x must have the same dtype"),
        ((x, gate, w1, w2.bfloat16(), 1), "w2 and x must have the same dtype"),
        ((x[0], gate, w1, w2, 1), "x must have 2 dimensions"),
        ((x, gate[0], w1, w2, 1), "gate_weight must have 2 dimensions"),
        ((x, gate[:, :7], w1, w2, 1), r"gate_weight must have shape \(experts, 8\)"),
        ((x, gate[:0], w1[:0], w2[:0], 1), "gate_weight must have at least one expert"),
        ((x, gate, w1[:2], w2, 1), r"w1 must have shape \(3, ffn, 8\)"),
        ((x, gate, w1[0], w2, 1), "w1 must have 3 dimensions"),
        ((x, gate, w1, w2[0], 1), "w2 must have 3 dimensions"),
        ((x, gate, w1, w2[:, :, :5], 1), r"w2 must have shape \(3, 8, 6\)"),
        ((x, gate, w1, w2, 0), "top_k must be between 1 and the number of experts"),
        ((x, gate, w1, w2, 4), "top_k must be between 1 and the number of experts"),
    ]
    for args, message in bad:
        with pytest.raises(RuntimeError, match=message):
            moe(*args)


@testing.requires_cuda
def test_rejects_mixed_devices_and_too_many_experts():
    x, gate, w1, w2 = make_inputs(5, 8, 6, 3, device="cuda")
    with pytest.raises(RuntimeError, match="w1 and x must be on the same device"):
        moe(x, gate, w1.cpu(), w2, 1)
    with pytest.raises(RuntimeError, match="gate_weight and x must be on the same device"):
        moe(x, gate.cpu(), w1, w2, 1)
    with pytest.raises(RuntimeError, match="w2 and x must be on the same device"):
        moe(x, gate, w1, w2.cpu(), 1)
    with pytest.raises(RuntimeError, match="gate_weight and x must be on the same device"):
        moe(x.cpu(), gate, w1, w2, 1)
    x, gate, w1, w2 = make_inputs(5, 8, 6, 257, device="cuda")
    with pytest.raises(RuntimeError, match="at most 256 experts"):
        moe(x, gate, w1, w2, 1)
