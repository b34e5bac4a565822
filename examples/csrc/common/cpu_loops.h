// CPU loops shared by the ops' CPU kernels, for both torch APIs (see torch_api.h).
#pragma once

#include <cstdint>
#include <type_traits>
#include <utility>

#include "common/torch_api.h"

#ifndef OPGEN_STABLE_API
#include <ATen/Parallel.h>
#endif

namespace examples::opgen::cpu {

// f(begin, end) over [0, n) in chunks of at least `grain`, on torch's intra-op thread pool.
template <typename F>
void parallel_for(int64_t n, int64_t grain, const F& f) {
#ifdef OPGEN_STABLE_API
  torch::stable::parallel_for(0, n, grain, f);
#else
  at::parallel_for(0, n, grain, f);
#endif
}

// out_k[i] = op(in[i]...)[k] for i < n, in parallel; a functor with one result writes out_0 only,
// and a null out_k is not stored. Each input is converted to its op-math type first (float for
// half and bfloat16), so the same functor serves the CPU and the CUDA kernels.
template <typename In>
using element_t = std::decay_t<decltype(std::declval<const In&>()[0])>;

// An input is a pointer to contiguous elements or a Broadcast (kernel_types.h).
template <typename Op, typename out_t, int K, typename... In>
void map(const Op& op, int64_t n, Array<out_t*, K> out, const In&... in) {
  constexpr int64_t kGrain = 32768;
  parallel_for(n, kGrain, [&](int64_t begin, int64_t end) {
    if constexpr (K == 1) {  // the common case, in a loop the compiler can vectorize
      out_t* __restrict__ y = out[0];
      for (int64_t i = begin; i < end; ++i) {
        y[i] = static_cast<out_t>(as_array(op(static_cast<opmath_t<element_t<In>>>(in[i])...))[0]);
      }
    } else {
      for (int64_t i = begin; i < end; ++i) {
        const auto results = op(static_cast<opmath_t<element_t<In>>>(in[i])...);
        for (int k = 0; k < K; ++k) {
          if (out[k] != nullptr) {
            out[k][i] = static_cast<out_t>(results[k]);
          }
        }
      }
    }
  });
}

// One output: out[i] = op(in[i]...).
template <typename Op, typename out_t, typename... In>
void map(const Op& op, int64_t n, out_t* out, const In&... in) {
  map(op, n, Array<out_t*, 1>{out}, in...);
}

}  // namespace examples::opgen::cpu
