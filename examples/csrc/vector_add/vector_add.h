// vector_add: the element-wise math, shared by the CPU kernel (vector_add.cpp) and the CUDA kernel
// (vector_add_cuda.cu), so the two cannot drift apart.
#pragma once

#include "common/torch_api.h"  // C10_HOST_DEVICE

namespace examples::vector_add {

// c = a + b. T is float or double: float16 and bfloat16 inputs are added in float and the sum
// rounded once, as PyTorch's own a + b does.
struct Add {
  template <typename T>
  C10_HOST_DEVICE T operator()(T a, T b) const {
    return a + b;
  }
};

}  // namespace examples::vector_add
