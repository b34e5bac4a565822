// vector_add_naive: the seed's kernel (one thread per float32 element, a 32-bit index, no
// vectors), registered only as a benchmark baseline for vector_add. Its int index is why it
// refuses 2^31 elements or more; use vector_add for real work.
#include <ATen/core/Tensor.h>
#include <ATen/cuda/CUDAContextLight.h>
#include <ATen/ops/empty.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/library.h>

#include <limits>

#include "common/checks.h"

namespace examples::vector_add {

__global__ void naive_add_kernel(const float* a, const float* b, float* c, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    c[i] = a[i] + b[i];
  }
}

at::Tensor naive_cuda(const at::Tensor& a, const at::Tensor& b) {
  opgen::check_dtype(a, "a", at::kFloat);
  opgen::check_same_device(a, "a", b, "b");
  opgen::check_same_dtype(a, "a", b, "b");
  opgen::check_same_shape(a, "a", b, "b");
  TORCH_CHECK(a.numel() <= std::numeric_limits<int>::max(), "vector_add_naive indexes with int: a has ",
              a.numel(), " elements, more than 2^31 - 1");
  const c10::cuda::CUDAGuard device_guard(a.device());
  const at::Tensor lhs = a.contiguous();
  const at::Tensor rhs = b.contiguous();
  at::Tensor c = at::empty(lhs.sizes(), lhs.options());
  const int n = static_cast<int>(lhs.numel());
  if (n == 0) {
    return c;
  }
  constexpr int kThreads = 256;
  naive_add_kernel<<<(int64_t(n) + kThreads - 1) / kThreads, kThreads, 0, at::cuda::getCurrentCUDAStream()>>>(
      lhs.const_data_ptr<float>(), rhs.const_data_ptr<float>(), c.mutable_data_ptr<float>(), n);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return c;
}

TORCH_LIBRARY_IMPL(examples, CUDA, m) {
  m.impl("vector_add_naive", &naive_cuda);
}

}  // namespace examples::vector_add
