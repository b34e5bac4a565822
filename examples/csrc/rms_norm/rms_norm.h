// rms_norm's math, one row of x's last dimension at a time (common/rowwise.h says what a
// row offers). The CPU loop and the CUDA kernel the build derives from opgen_examples/ops/rms_norm.py run it,
// in float (float16, bfloat16, float32) or double.
#pragma once

#include <cmath>
#include <cstdint>

#include "common/kernel_types.h"  // OPGEN_HOST_DEVICE

namespace examples::rms_norm {

// y = x * weight / sqrt(mean(x^2) + eps), in float (double for float64).
template <typename T>
struct Forward {
  T eps;

  template <typename Row, typename In, typename Out>
  OPGEN_HOST_DEVICE void operator()(const Row& row, const In& x, const In& weight, const Out& y) const {
    const T n = T(x.cols > 0 ? x.cols : 1);
    const T scale = T(1) / std::sqrt(row.sum(x.cols, [&](auto j) { return x[j] * x[j]; }) / n + eps);
    row.for_each(y.cols, [&](auto j) { y.set(j, x[j] * scale * weight[j]); });
  }
};

// The gradients of x, weight from grad, the result's: one output row each
// (grad_x, grad_weight).
template <typename T>
struct Backward {
  T eps;

  template <typename Row, typename In, typename Out>
  OPGEN_HOST_DEVICE void operator()(const Row& row, const In& grad, const In& x, const In& weight, const Out& grad_x,
                                    const Out& grad_weight) const {
    // dx = s (g w - x s^2 mean(g w x)), dw = g x s for s = 1 / sqrt(mean(x^2) + eps).
    const T n = T(x.cols > 0 ? x.cols : 1);
    const T scale = T(1) / std::sqrt(row.sum(x.cols, [&](auto j) { return x[j] * x[j]; }) / n + eps);
    const T dot = row.sum(x.cols, [&](auto j) { return grad[j] * weight[j] * x[j]; }) / n;
    row.for_each(x.cols, [&](auto j) {
      grad_x.set(j, scale * (grad[j] * weight[j] - x[j] * scale * scale * dot));
      grad_weight.set(j, grad[j] * x[j] * scale);
    });
  }
};

}  // namespace examples::rms_norm
