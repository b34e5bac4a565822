// scale: the element-wise math, shared by the CPU kernel (scale.cpp) and the CUDA kernel
// (scale_cuda.cu), so the two cannot drift apart.
#pragma once

#include "common/torch_api.h"  // C10_HOST_DEVICE

namespace examples::scale {

// y = x * factor. T is float or double: float16 and bfloat16 inputs are scaled in float (factor
// rounded to float once, on the host) and the product rounded once, as PyTorch's x * factor does.
template <typename T>
struct Scale {
  T factor;

  C10_HOST_DEVICE T operator()(T x) const {
    return x * factor;
  }
};

}  // namespace examples::scale
