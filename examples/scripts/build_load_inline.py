"""Way 1 of four to build a custom op: torch.utils.cpp_extension.load_inline, sources as strings.

A vector add, registered with TORCH_LIBRARY under a namespace of its own (inline_demo) and called as
torch.ops.inline_demo.vector_add: no pybind11 module (is_python_module=False), so torch.compile and
TorchScript see it like any ATen op. The CPU kernel is always built; the CUDA kernel too when a GPU,
torch with CUDA and a CUDA toolkit are present (and OPGEN_CPU_ONLY is not set).

    cd examples && python scripts/build_load_inline.py    # prints one OK line

Builds are cached under TORCH_EXTENSIONS_DIR (default ~/.cache/torch_extensions): a second run
with unchanged sources loads the library without compiling.
"""
from __future__ import annotations

import os

import torch
from torch.utils import cpp_extension

# Each source includes what it uses (no_implicit_headers below): load_inline would otherwise put
# <torch/extension.h> first, most of a CPU compile (here 50 s of g++ against 13).
CPP_SOURCE = r"""
#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty_like.h>
#include <torch/library.h>

namespace inline_demo {

void check_inputs(const at::Tensor& a, const at::Tensor& b) {
  TORCH_CHECK(a.is_floating_point(), "a must be a floating-point tensor, got ", a.scalar_type());
  TORCH_CHECK(a.scalar_type() == b.scalar_type(), "a and b must have the same dtype, got ", a.scalar_type(),
              " and ", b.scalar_type());
  TORCH_CHECK(a.sizes() == b.sizes(), "a and b must have the same shape, got ", a.sizes(), " and ", b.sizes());
  TORCH_CHECK(a.device() == b.device(), "a and b must be on the same device, got ", a.device(), " and ",
              b.device());
}

at::Tensor vector_add_cpu(const at::Tensor& a, const at::Tensor& b) {
  check_inputs(a, b);
  const at::Tensor a_c = a.contiguous();
  const at::Tensor b_c = b.contiguous();
  at::Tensor out = at::empty_like(a_c);
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, a.scalar_type(), "inline_vector_add_cpu", [&] {
    const scalar_t* x = a_c.const_data_ptr<scalar_t>();
    const scalar_t* y = b_c.const_data_ptr<scalar_t>();
    scalar_t* z = out.mutable_data_ptr<scalar_t>();
    at::parallel_for(0, out.numel(), 1 << 14, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        z[i] = x[i] + y[i];
      }
    });
  });
  return out;
}

TORCH_LIBRARY(inline_demo, m) {
  m.def("vector_add(Tensor a, Tensor b) -> Tensor");
}

TORCH_LIBRARY_IMPL(inline_demo, CPU, m) {
  m.impl("vector_add", &vector_add_cpu);
}

}  // namespace inline_demo
"""

# Grid-stride loop with 64-bit indices, on the current stream; the schema comes from CPP_SOURCE.
CUDA_SOURCE = r"""
#include <ATen/ATen.h>
#include <ATen/Dispatch.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/library.h>

#include <algorithm>

namespace inline_demo {

void check_inputs(const at::Tensor& a, const at::Tensor& b);  // in the C++ source

template <typename T>
__global__ void add_kernel(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ out, int64_t n) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    out[i] = a[i] + b[i];
  }
}

at::Tensor vector_add_cuda(const at::Tensor& a, const at::Tensor& b) {
  check_inputs(a, b);
  const c10::cuda::CUDAGuard device_guard(a.device());
  const at::Tensor a_c = a.contiguous();
  const at::Tensor b_c = b.contiguous();
  at::Tensor out = at::empty_like(a_c);
  const int64_t n = out.numel();
  if (n == 0) {
    return out;
  }
  constexpr int kThreads = 256;
  const int blocks = static_cast<int>(std::min<int64_t>((n + kThreads - 1) / kThreads, 65536));
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, a.scalar_type(), "inline_vector_add_cuda", [&] {
    add_kernel<scalar_t><<<blocks, kThreads, 0, c10::cuda::getCurrentCUDAStream()>>>(
        a_c.const_data_ptr<scalar_t>(), b_c.const_data_ptr<scalar_t>(), out.mutable_data_ptr<scalar_t>(), n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  });
  return out;
}

TORCH_LIBRARY_IMPL(inline_demo, CUDA, m) {
  m.impl("vector_add", &vector_add_cuda);
}

}  // namespace inline_demo
"""


def build_cuda() -> bool:
    cpu_only = os.environ.get("OPGEN_CPU_ONLY", "0") not in ("", "0")
    return not cpu_only and torch.cuda.is_available() and cpp_extension.CUDA_HOME is not None


def main() -> None:
    with_cuda = build_cuda()
    cpp_extension.load_inline(
        name="inline_demo_vector_add" + ("_cuda" if with_cuda else ""),
        cpp_sources=CPP_SOURCE,
        cuda_sources=CUDA_SOURCE if with_cuda else None,
        extra_cflags=["-O3"],
        extra_cuda_cflags=["-O3"],
        with_cuda=with_cuda,
        is_python_module=False,  # a plain shared library: its TORCH_LIBRARY blocks register the op
        no_implicit_headers=True,
    )
    op = torch.ops.inline_demo.vector_add
    devices = ["cpu"] + (["cuda"] if with_cuda else [])
    for device in devices:
        for dtype in (torch.float32, torch.bfloat16):
            a = torch.randn(1031, 7, device=device, dtype=dtype)
            b = torch.randn(7, 1031, device=device, dtype=dtype).t()  # non-contiguous
            torch.testing.assert_close(op(a, b), a + b, rtol=0, atol=0)
        try:
            op(torch.ones(3, device=device), torch.ones(4, device=device))
        except RuntimeError as error:
            assert "a and b must have the same shape" in str(error), error
        else:
            raise AssertionError("shape mismatch was not rejected")
    print(f"OK build_load_inline: torch.ops.inline_demo.vector_add == a + b on {', '.join(devices)} "
          "(float32, bfloat16, non-contiguous b; shape mismatch rejected)")


if __name__ == "__main__":
    main()
