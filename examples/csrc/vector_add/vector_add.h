// vector_add: the element-wise math, shared by the CPU kernel (vector_add.cpp) and the CUDA kernel
// (vector_add_cuda.cu), so the two cannot drift apart. Torch-free: the .cu compiles in seconds.
#pragma once

#include <cmath>

#include "common/kernel_types.h"  // OPGEN_HOST_DEVICE, opgen::Grads

namespace examples::vector_add {

// c = a + b. T is the math type: float16 and bfloat16 inputs are added in float and the sum
// rounded once, as PyTorch's own a + b does.
template <typename T>
struct Forward {
  OPGEN_HOST_DEVICE T operator()(T a, T b) const {
    return a + b;
  }
};

// One gradient per input, in order: grad * dy/da, grad * dy/db, given grad = dL/dy.
template <typename T>
struct Backward {
  OPGEN_HOST_DEVICE opgen::Grads<T, 2> operator()(T grad, T a, T b) const {
    return {grad, grad};  // d(a + b)/da = d(a + b)/db = 1
  }
};

}  // namespace examples::vector_add
