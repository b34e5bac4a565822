// CPU loops shared by the ops' reference implementations.
#pragma once

#include <ATen/OpMathType.h>
#include <ATen/Parallel.h>

#include <cstdint>

namespace opgen::cpu {

// out[i] = op(in[i]...) for i < n, in parallel. Each input is converted to its op-math type first
// (float for half and bfloat16), so the same functor serves the CPU and the CUDA kernels.
template <typename Op, typename out_t, typename... in_t>
void map(const Op& op, int64_t n, out_t* out, const in_t*... in) {
  constexpr int64_t kGrain = 32768;
  at::parallel_for(0, n, kGrain, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      out[i] = static_cast<out_t>(op(static_cast<at::opmath_type<in_t>>(in[i])...));
    }
  });
}

}  // namespace opgen::cpu
