// fused_relu_scale: schema, host code for CPU and CUDA (checks, allocation, device guard, stream) and the CPU
// kernel. The math is in fused_relu_scale.h, the CUDA kernel in fused_relu_scale_cuda.cu.
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
  const opgen::DeviceGuard device_guard(x);
  Tensor y = opgen::empty(x, opgen::sizes(x));
  run_forward(y, x, alpha);
  return y;
}

Tensor backward(const Tensor& grad, const opgen::Tensor& x, double alpha) {
  check_inputs(x);
  opgen::check_like(grad, "grad", x, "x");
  const opgen::DeviceGuard device_guard(x);
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

OPGEN_LIBRARY_FRAGMENT(examples, m) {
  m.def("fused_relu_scale(Tensor x, float alpha) -> Tensor");
  m.def("fused_relu_scale_backward(Tensor grad, Tensor x, float alpha) -> Tensor");
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
}
#endif

}  // namespace examples::fused_relu_scale
