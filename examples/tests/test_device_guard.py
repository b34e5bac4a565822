"""Every CUDA op with its inputs on cuda:1 while cuda:0 is the current device: its device guard must
move the launch, the allocations and the stream to cuda:1, and give what the op gives on cuda:0.
Needs two GPUs; skipped elsewhere."""
import math
import subprocess
import sys

import pytest
import torch

from opgen_examples import testing
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


# A CUDA op written without a device guard, to show that the check above can fail.
_GUARDLESS_CPP = """
#include <torch/library.h>
TORCH_LIBRARY(guardless_demo, m) { m.def("twice(Tensor x) -> Tensor"); }
"""
_GUARDLESS_CUDA = """
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty_like.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/library.h>

__global__ void twice_kernel(const float* x, float* y, int64_t n) {
  const int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  if (i < n) y[i] = 2.0f * x[i];
}

// No c10::cuda::CUDAGuard here: the launch goes to the current device and its stream.
at::Tensor twice(const at::Tensor& x) {
  TORCH_CHECK(x.is_cuda() && x.scalar_type() == at::kFloat && x.is_contiguous(), "x: contiguous float32 CUDA");
  at::Tensor y = at::empty_like(x);
  const int64_t n = x.numel();
  if (n > 0) {
    twice_kernel<<<(n + 255) / 256, 256, 0, c10::cuda::getCurrentCUDAStream()>>>(
        x.const_data_ptr<float>(), y.mutable_data_ptr<float>(), n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  }
  return y;
}

TORCH_LIBRARY_IMPL(guardless_demo, CUDA, m) { m.impl("twice", &twice); }
"""
_CHECK_THE_GUARDLESS_OP = """
import sys, torch
from torch.utils import cpp_extension
from opgen_examples import testing
cpp_extension.load_inline("guardless_demo", sys.argv[1], cuda_sources=sys.argv[2], build_directory=sys.argv[3],
                          is_python_module=False)
twice = torch.ops.guardless_demo.twice
x = testing.make_tensor((1 << 20,), torch.float32, "cuda:0")
torch.testing.assert_close(twice(x), 2 * x)  # right on the current device
try:
    testing.check_runs_on_the_inputs_device(twice, x)
except Exception as error:  # a wrong answer or a CUDA error: caught either way
    print("CAUGHT", type(error).__name__, str(error)[:200])
else:
    print("MISSED")
"""


@testing.requires_two_cuda_devices
def test_the_check_catches_an_op_without_a_device_guard(tmp_path):
    # In a subprocess: a guardless launch may leave a sticky CUDA error behind.
    result = subprocess.run([sys.executable, "-c", _CHECK_THE_GUARDLESS_OP, _GUARDLESS_CPP, _GUARDLESS_CUDA, str(tmp_path)],
                            capture_output=True, text=True, timeout=900)
    assert "CAUGHT" in result.stdout, result.stdout + result.stderr[-3000:]
