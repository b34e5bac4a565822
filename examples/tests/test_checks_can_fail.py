"""The stream and device-guard checks of `testing` must be able to fail. Two ops written wrong on
purpose, built with load_inline, must be caught: one launches on the legacy default stream instead
of the current one, the other has no device guard. Each check runs in a subprocess, since a launch
on the wrong device may leave a sticky CUDA error behind."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

import opgen_testing as testing

_CPP = """
#include <torch/library.h>
TORCH_LIBRARY(broken_demo, m) {
  m.def("twice_on_the_default_stream(Tensor x) -> Tensor");
  m.def("twice_without_device_guard(Tensor x) -> Tensor");
}
"""
_CUDA = """
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty_like.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/library.h>

__global__ void twice_kernel(const float* x, float* y, int64_t n) {
  const int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  if (i < n) y[i] = 2.0f * x[i];
}

at::Tensor twice_on(const at::Tensor& x, cudaStream_t stream) {
  TORCH_CHECK(x.is_cuda() && x.scalar_type() == at::kFloat && x.is_contiguous(), "x: contiguous float32 CUDA");
  at::Tensor y = at::empty_like(x);
  const int64_t n = x.numel();
  if (n > 0) {
    twice_kernel<<<(n + 255) / 256, 256, 0, stream>>>(x.const_data_ptr<float>(), y.mutable_data_ptr<float>(), n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  }
  return y;
}

// Guarded, but on the legacy default stream, which does not wait for torch's (non-blocking) streams.
at::Tensor twice_on_the_default_stream(const at::Tensor& x) {
  const c10::cuda::CUDAGuard guard(x.device());
  return twice_on(x, c10::cuda::getDefaultCUDAStream());
}

// The current stream, but no guard: the launch goes to the current device, wherever x lives.
at::Tensor twice_without_device_guard(const at::Tensor& x) {
  return twice_on(x, c10::cuda::getCurrentCUDAStream());
}

TORCH_LIBRARY_IMPL(broken_demo, CUDA, m) {
  m.impl("twice_on_the_default_stream", &twice_on_the_default_stream);
  m.impl("twice_without_device_guard", &twice_without_device_guard);
}
"""
_RUN_A_CHECK = """
import sys, torch
from torch.utils import cpp_extension
import opgen_testing as testing
cpp, cuda, build_directory, op_name, check_name = sys.argv[1:]
cpp_extension.load_inline("broken_demo", cpp, cuda_sources=cuda, build_directory=build_directory, is_python_module=False)
op = getattr(torch.ops.broken_demo, op_name)

def check_on_a_side_stream(op, x):
    expected = 2 * x
    torch.testing.assert_close(testing.call_on_side_stream(op, x), expected)

x = testing.make_tensor((1 << 20,), torch.float32, "cuda:0")
torch.testing.assert_close(op(x), 2 * x)  # right where nothing checks the stream or the device
check = {"side_stream": check_on_a_side_stream, "inputs_device": testing.check_runs_on_the_inputs_device}[check_name]
try:
    check(op, x)
except Exception as error:  # a wrong answer or a CUDA error: caught either way
    print("CAUGHT", type(error).__name__, str(error)[:300].replace(chr(10), " "))
else:
    print("MISSED")
"""


TESTS = str(Path(__file__).resolve().parent)


@pytest.fixture(scope="module")
def build_directory(tmp_path_factory):
    return tmp_path_factory.mktemp("broken_demo")  # shared: the second check reuses the first build


def assert_caught(check_name: str, op_name: str, build_directory) -> None:
    # The helpers live next to this file (tests/opgen_testing.py), not in the package.
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [TESTS, os.environ.get("PYTHONPATH")]))}
    result = subprocess.run([sys.executable, "-c", _RUN_A_CHECK, _CPP, _CUDA, str(build_directory), op_name, check_name],
                            capture_output=True, text=True, timeout=900, env=env)
    assert "CAUGHT" in result.stdout, result.stdout + result.stderr[-3000:]
    print(result.stdout)  # what caught it, for -rP


@testing.requires_cuda
def test_the_side_stream_check_catches_a_launch_on_the_default_stream(build_directory):
    assert_caught("side_stream", "twice_on_the_default_stream", build_directory)


@testing.requires_two_cuda_devices
def test_the_device_check_catches_an_op_without_a_device_guard(build_directory):
    assert_caught("inputs_device", "twice_without_device_guard", build_directory)
