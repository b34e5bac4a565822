// fused_relu_scale_naive: the seed's kernel (one thread per float32 element, an int index),
// registered only as a benchmark baseline for fused_relu_scale. The seed's launcher also
// synchronized the device after each launch; that is left out, so the timing is the kernel's.
#include <limits>

#include "common/checks.h"
#include "common/torch_api.h"

namespace examples::fused_relu_scale {

using opgen::Tensor;

__global__ void naive_relu_scale_kernel(const float* input, float* output, int n, float alpha) {
  const int idx = blockIdx.x * blockDim.x + threadIdx.x;
  if (idx < n) {
    output[idx] = fmaxf(input[idx], 0.0f) * alpha;
  }
}

Tensor naive_cuda(const Tensor& x, double alpha) {
  opgen::check_dtype(x, "x", opgen::kFloat);
  OPGEN_CHECK(x.numel() <= std::numeric_limits<int>::max(), "fused_relu_scale_naive indexes with int: x has ",
              x.numel(), " elements, more than 2^31 - 1");
  const opgen::DeviceGuard device_guard(x);
  const Tensor input = opgen::contiguous(x);
  Tensor output = opgen::empty_like(input);
  const int n = static_cast<int>(input.numel());
  if (n == 0) {
    return output;
  }
  constexpr int kThreads = 256;  // the seed's block size
  naive_relu_scale_kernel<<<(int64_t(n) + kThreads - 1) / kThreads, kThreads, 0, opgen::current_stream()>>>(
      input.const_data_ptr<float>(), output.mutable_data_ptr<float>(), n, static_cast<float>(alpha));
  OPGEN_CUDA_LAUNCH_CHECK();
  return output;
}

OPGEN_LIBRARY_IMPL(examples, CUDA, m) {
  m.impl("fused_relu_scale_naive", OPGEN_KERNEL(naive_cuda));
}

}  // namespace examples::fused_relu_scale
