// fused_linear_gelu_naive: the seed's kernel (one thread per output element, a plain loop over
// in_features, no tiling or tensor cores, an int index), declared in opgen_examples/ops/fused_linear_gelu.py
// only as a benchmark baseline for fused_linear_gelu. float32, x (batch, in_features).
#include "common/use_aten.h"  // on the full ATen API: see docs/index.md for why

#include <ATen/core/Tensor.h>
#include <ATen/cuda/CUDAContextLight.h>
#include <ATen/ops/empty.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <algorithm>
#include <limits>

#include "common/checks.h"
#include "fused_linear_gelu/fused_linear_gelu.h"

namespace examples::fused_linear_gelu {

__global__ void naive_linear_gelu_kernel(const float* input, const float* weight, const float* bias, float* output,
                                         int batch, int in_features, int out_features) {
  const int idx = blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= batch * out_features) {
    return;
  }
  const int b = idx / out_features;
  const int o = idx % out_features;
  float sum = bias[o];
  for (int i = 0; i < in_features; ++i) {
    sum += input[b * in_features + i] * weight[o * in_features + i];
  }
  const float x = sum;
  output[idx] = 0.5f * x * (1.0f + tanhf(0.7978845608028654f * x * (1.0f + 0.044715f * x * x)));
}

at::Tensor naive_cuda(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
  check_arguments(x, weight, bias);  // fused_linear_gelu's: devices, dtypes, ranks and sizes
  opgen::check_dtype(x, "x", at::kFloat);
  opgen::check_dim(x, "x", 2);
  TORCH_CHECK(x.size(0) * weight.size(0) <= std::numeric_limits<int>::max() &&
                  std::max(x.numel(), weight.numel()) <= std::numeric_limits<int>::max(),
              "fused_linear_gelu_naive indexes with int: the sizes pass 2^31 - 1");
  const c10::cuda::CUDAGuard device_guard(x.device());
  const at::Tensor input = x.contiguous(), w = weight.contiguous(), b = bias.contiguous();
  const int batch = static_cast<int>(x.size(0));
  const int in_features = static_cast<int>(x.size(1));
  const int out_features = static_cast<int>(weight.size(0));
  at::Tensor output = at::empty({batch, out_features}, input.options());
  if (output.numel() == 0) {
    return output;
  }
  constexpr int kThreads = 256;
  naive_linear_gelu_kernel<<<(output.numel() + kThreads - 1) / kThreads, kThreads, 0,
                             at::cuda::getCurrentCUDAStream()>>>(
      input.const_data_ptr<float>(), w.const_data_ptr<float>(), b.const_data_ptr<float>(),
      output.mutable_data_ptr<float>(), batch, in_features, out_features);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return output;
}

}  // namespace examples::fused_linear_gelu
