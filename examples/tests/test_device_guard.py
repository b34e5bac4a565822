"""Every CUDA op with its inputs on cuda:1 while cuda:0 is the current device: its device guard must
move the launch, the allocations and the stream to cuda:1, and give what the op gives on cuda:0.
Needs two GPUs; skipped elsewhere."""
import math

import pytest
import torch

import opgen_testing as testing
from opgen_examples.ops.bitonic_sort import bitonic_sort
from opgen_examples.ops.fused_bias_gelu import fused_bias_gelu
from opgen_examples.ops.fused_linear_gelu import fused_linear_gelu
from opgen_examples.ops.fused_relu_scale import fused_relu_scale
from opgen_examples.ops.gelu_approx import gelu_approx
from opgen_examples.ops.gemm import gemm
from opgen_examples.ops.moe import moe
from opgen_examples.ops.normalize_volume import normalize_volume
from opgen_examples.ops.rgb_to_gray import rgb_to_gray
from opgen_examples.ops.scale import scale
from opgen_examples.ops.vector_add import vector_add


def _floats(*shape, bound=1.0):
    return testing.make_tensor(shape, torch.float32, "cuda:0", low=-bound, high=bound)


def _moe_inputs(tokens=300, hidden=64, ffn=48, experts=8):
    return (_floats(tokens, hidden), _floats(experts, hidden), _floats(experts, ffn, hidden, bound=math.sqrt(3 / hidden)),
            _floats(experts, hidden, ffn, bound=math.sqrt(3 / ffn)))


# case: (the op with its non-tensor arguments bound, a function making its tensor inputs on cuda:0)
CASES = {
    "vector_add": (vector_add, lambda: (_floats(10007), _floats(10007))),
    "scale": (lambda x: scale(x, -1.37), lambda: (_floats(10007),)),
    "fused_relu_scale": (lambda x: fused_relu_scale(x, 1.5), lambda: (_floats(10007),)),
    "gelu_approx": (gelu_approx, lambda: (_floats(10007),)),
    "fused_bias_gelu": (fused_bias_gelu, lambda: (_floats(65, 129), _floats(129))),
    "fused_linear_gelu_small_batch": (fused_linear_gelu, lambda: (_floats(16, 96), _floats(40, 96), _floats(40))),
    "fused_linear_gelu_gemm_batch": (fused_linear_gelu, lambda: (_floats(64, 96), _floats(40, 96), _floats(40))),
    "rgb_to_gray": (rgb_to_gray, lambda: (testing.make_tensor((97, 131, 3), torch.uint8, "cuda:0", low=0, high=255),)),
    "normalize_volume": (lambda v: normalize_volume(v, 4095.0),
                         lambda: (testing.make_tensor((9, 33, 65), torch.uint16, "cuda:0", low=0, high=4095),)),
    "gemm": (gemm, lambda: (_floats(129, 65), _floats(65, 97))),
    "bitonic_sort": (bitonic_sort, lambda: (_floats(33, 1000),)),
    "moe": (lambda *tensors: moe(*tensors, 2), _moe_inputs),
}


@testing.requires_two_cuda_devices
@pytest.mark.parametrize("case", sorted(CASES))
def test_runs_on_the_inputs_device(case):
    op, make_inputs = CASES[case]
    testing.check_runs_on_the_inputs_device(op, *make_inputs())
