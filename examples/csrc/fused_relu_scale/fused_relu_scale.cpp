// fused_relu_scale: schema, host code for CPU and CUDA (checks, allocation, device guard, stream) and the CPU
// kernel. The math is in fused_relu_scale.h, the CUDA kernel in fused_relu_scale_cuda.cu; the seed's
// kernel, a benchmark baseline, in fused_relu_scale_naive_cuda.cu.
#include <limits>

#include "common/checks.h"
#include "common/cpu_loops.h"
#include "common/torch_api.h"
#include "fused_relu_scale/fused_relu_scale.h"

namespace examples::fused_relu_scale {

using opgen::Buffer;
using opgen::Tensor;

#ifdef OPGEN_WITH_CUDA
// In fused_relu_scale_cuda.cu (compiled by nvcc without torch's headers).
void forward_cuda(opgen::CudaStream stream, const Buffer& y, const Buffer& x, double alpha);
void backward_cuda(opgen::CudaStream stream, const Buffer& grad, const Buffer& x, const Buffer& dx, double alpha);
// In fused_relu_scale_naive_cuda.cu.
void naive_cuda(opgen::CudaStream stream, const Buffer& y, const Buffer& x, float alpha);
#endif

namespace {

void forward_cpu(const Buffer& y, const Buffer& x, double alpha) {
  OPGEN_DISPATCH_FLOATING(static_cast<opgen::ScalarType>(y.dtype), "fused_relu_scale_cpu", [&] {
    using T = opgen::opmath_t<scalar_t>;
    opgen::cpu::map(Forward<T>{static_cast<T>(alpha)}, y.numel, y.as<scalar_t>(), x.as<const scalar_t>());
  });
}

void backward_cpu(const Buffer& grad, const Buffer& x, const Buffer& dx, double alpha) {
  OPGEN_DISPATCH_FLOATING(static_cast<opgen::ScalarType>(grad.dtype), "fused_relu_scale_backward_cpu", [&] {
    using T = opgen::opmath_t<scalar_t>;
    opgen::cpu::map(Backward<T>{static_cast<T>(alpha)}, grad.numel, dx.as<scalar_t>(), grad.as<const scalar_t>(), x.as<const scalar_t>());
  });
}

// Every tensor floating-point, on one device, with one dtype and one shape.
void check_inputs(const opgen::Tensor& x) {
  opgen::check_floating(x, "x");
}

// y = fused_relu_scale(...) into y: contiguous, with x's shape, dtype and device.
void run_forward(const Tensor& y, const opgen::Tensor& x, double alpha) {
  const Tensor x_contiguous = opgen::contiguous(x);
#ifdef OPGEN_WITH_CUDA
  if (y.is_cuda()) {
    forward_cuda(opgen::current_stream(), opgen::output(y), opgen::input(x_contiguous), alpha);
    return;
  }
#endif
  forward_cpu(opgen::output(y), opgen::input(x_contiguous), alpha);
}

}  // namespace

Tensor forward(const opgen::Tensor& x, double alpha) {
  check_inputs(x);
#ifdef OPGEN_WITH_CUDA  // (the template's DeviceGuard exists only in CUDA builds)
  const opgen::DeviceGuard device_guard(x);
#endif
  Tensor y = opgen::empty(x, opgen::sizes(x));
  run_forward(y, x, alpha);
  return y;
}

Tensor backward(const Tensor& grad, const opgen::Tensor& x, double alpha) {
  check_inputs(x);
  opgen::check_like(grad, "grad", x, "x");
#ifdef OPGEN_WITH_CUDA  // (the template's DeviceGuard exists only in CUDA builds)
  const opgen::DeviceGuard device_guard(x);
#endif
  const Tensor grad_contiguous = opgen::contiguous(grad);
  const Tensor x_contiguous = opgen::contiguous(x);
  Tensor dx = opgen::empty(x, opgen::sizes(x));
#ifdef OPGEN_WITH_CUDA
  if (grad.is_cuda()) {
    backward_cuda(opgen::current_stream(), opgen::input(grad_contiguous), opgen::input(x_contiguous), opgen::output(dx), alpha);
    return dx;
  }
#endif
  backward_cpu(opgen::input(grad_contiguous), opgen::input(x_contiguous), opgen::output(dx), alpha);
  return dx;
}

#ifdef OPGEN_WITH_CUDA
// The seed's kernel: CUDA only, float32 only, fewer than 2^31 elements (its index is an int).
Tensor naive(const Tensor& x, double alpha) {
  opgen::check_dtype(x, "x", opgen::kFloat);
  OPGEN_CHECK(x.numel() <= std::numeric_limits<int>::max(), "fused_relu_scale_naive indexes with int: x has ",
              x.numel(), " elements, more than 2^31 - 1");
  const opgen::DeviceGuard device_guard(x);
  const Tensor input = opgen::contiguous(x);
  Tensor output = opgen::empty_like(input);
  naive_cuda(opgen::current_stream(), opgen::output(output), opgen::input(input), static_cast<float>(alpha));
  return output;
}
#endif

OPGEN_LIBRARY_FRAGMENT(examples, m) {
  m.def("fused_relu_scale(Tensor x, float alpha) -> Tensor");
  m.def("fused_relu_scale_backward(Tensor grad, Tensor x, float alpha) -> Tensor");
  m.def("fused_relu_scale_naive(Tensor x, float alpha) -> Tensor");  // the seed's kernel, CUDA only
}

// One host function per op serves both devices: it picks the kernel from the tensors' device.
OPGEN_LIBRARY_IMPL(examples, CPU, m) {
  m.impl("fused_relu_scale", OPGEN_KERNEL(forward));
  m.impl("fused_relu_scale_backward", OPGEN_KERNEL(backward));
}
#ifdef OPGEN_WITH_CUDA
OPGEN_LIBRARY_IMPL(examples, CUDA, m) {
  m.impl("fused_relu_scale", OPGEN_KERNEL(forward));
  m.impl("fused_relu_scale_backward", OPGEN_KERNEL(backward));
  m.impl("fused_relu_scale_naive", OPGEN_KERNEL(naive));
}
#endif

}  // namespace examples::fused_relu_scale
