// CPU loops shared by the ops' CPU kernels, for both torch APIs (see torch_api.h).
#pragma once

#include <cstdint>

#include "common/torch_api.h"

#ifndef OPGEN_STABLE_API
#include <ATen/Parallel.h>
#endif

namespace opgen::cpu {

// f(begin, end) over [0, n) in chunks of at least `grain`, on torch's intra-op thread pool.
template <typename F>
void parallel_for(int64_t n, int64_t grain, const F& f) {
#ifdef OPGEN_STABLE_API
  torch::stable::parallel_for(0, n, grain, f);
#else
  at::parallel_for(0, n, grain, f);
#endif
}

// out[i] = op(in[i]...) for i < n, in parallel. Each input is converted to its op-math type first
// (float for half and bfloat16), so the same functor serves the CPU and the CUDA kernels.
template <typename Op, typename out_t, typename... in_t>
void map(const Op& op, int64_t n, out_t* out, const in_t*... in) {
  constexpr int64_t kGrain = 32768;
  parallel_for(n, kGrain, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      out[i] = static_cast<out_t>(op(static_cast<opmath_t<in_t>>(in[i])...));
    }
  });
}

}  // namespace opgen::cpu
