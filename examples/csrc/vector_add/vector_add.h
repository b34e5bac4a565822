// vector_add: the element-wise math, shared by the CPU kernel (vector_add.cpp) and the CUDA kernel
// (vector_add_cuda.cu), so the two cannot drift apart. Torch-free: the .cu compiles in seconds.
#pragma once

#include <cmath>

#include "common/kernel_types.h"  // OPGEN_HOST_DEVICE, opgen::Grads

namespace examples::vector_add {

// y = f(a, b), element by element. T is the math type: float for float16
// and bfloat16 inputs, else the input dtype.
// Placeholder math (the product of the arguments): replace it with vector_add's, together with
// Backward below and reference() in opgen_examples/ops/vector_add.py.
template <typename T>
struct Forward {
  OPGEN_HOST_DEVICE T operator()(T a, T b) const {
    return a * b;
  }
};

// One gradient per input, in order: grad * dy/da, grad * dy/db, given grad = dL/dy.
template <typename T>
struct Backward {
  OPGEN_HOST_DEVICE opgen::Grads<T, 2> operator()(T grad, T a, T b) const {
    return {grad * b, grad * a};
  }
};

}  // namespace examples::vector_add
