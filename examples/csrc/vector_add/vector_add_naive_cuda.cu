// vector_add_naive: the seed's kernel (one thread per float32 element, a 32-bit index, no
// vectors), registered only as a benchmark baseline for vector_add. Its int index is why it
// refuses 2^31 elements or more; use vector_add for real work.
#include <limits>

#include "common/checks.h"
#include "common/torch_api.h"

namespace examples::vector_add {

using opgen::Tensor;

__global__ void naive_add_kernel(const float* a, const float* b, float* c, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    c[i] = a[i] + b[i];
  }
}

Tensor naive_cuda(const Tensor& a, const Tensor& b) {
  opgen::check_dtype(a, "a", opgen::kFloat);
  opgen::check_same_device(a, "a", b, "b");
  opgen::check_same_dtype(a, "a", b, "b");
  opgen::check_same_shape(a, "a", b, "b");
  OPGEN_CHECK(a.numel() <= std::numeric_limits<int>::max(), "vector_add_naive indexes with int: a has ",
              a.numel(), " elements, more than 2^31 - 1");
  const opgen::DeviceGuard device_guard(a);
  const Tensor lhs = opgen::contiguous(a);
  const Tensor rhs = opgen::contiguous(b);
  Tensor c = opgen::empty_like(lhs);
  const int n = static_cast<int>(lhs.numel());
  if (n == 0) {
    return c;
  }
  constexpr int kThreads = 256;
  naive_add_kernel<<<(int64_t(n) + kThreads - 1) / kThreads, kThreads, 0, opgen::current_stream()>>>(
      lhs.const_data_ptr<float>(), rhs.const_data_ptr<float>(), c.mutable_data_ptr<float>(), n);
  OPGEN_CUDA_LAUNCH_CHECK();
  return c;
}

OPGEN_LIBRARY_IMPL(examples, CUDA, m) {
  m.impl("vector_add_naive", OPGEN_KERNEL(naive_cuda));
}

}  // namespace examples::vector_add
