// scale: schema, host code for CPU and CUDA (checks, allocation, device guard, stream) and the CPU
// kernel. The math is in scale.h, the CUDA kernel in scale_cuda.cu.
#include "common/checks.h"
#include "common/cpu_loops.h"
#include "common/torch_api.h"
#include "scale/scale.h"

namespace examples::scale {

using opgen::Buffer;
using opgen::Tensor;

#ifdef OPGEN_WITH_CUDA
// In scale_cuda.cu (compiled by nvcc without torch's headers).
void forward_cuda(opgen::CudaStream stream, const Buffer& y, const Buffer& x, double factor);
void backward_cuda(opgen::CudaStream stream, const Buffer& grad, const Buffer& x, const Buffer& dx, double factor);
#endif

namespace {

void forward_cpu(const Buffer& y, const Buffer& x, double factor) {
  OPGEN_DISPATCH_FLOATING(static_cast<opgen::ScalarType>(y.dtype), "scale_cpu", [&] {
    using T = opgen::opmath_t<scalar_t>;
    opgen::cpu::map(Forward<T>{static_cast<T>(factor)}, y.numel, y.as<scalar_t>(), x.as<const scalar_t>());
  });
}

void backward_cpu(const Buffer& grad, const Buffer& x, const Buffer& dx, double factor) {
  OPGEN_DISPATCH_FLOATING(static_cast<opgen::ScalarType>(grad.dtype), "scale_backward_cpu", [&] {
    using T = opgen::opmath_t<scalar_t>;
    opgen::cpu::map(Backward<T>{static_cast<T>(factor)}, grad.numel, dx.as<scalar_t>(), grad.as<const scalar_t>(), x.as<const scalar_t>());
  });
}

// Every tensor floating-point, on one device, with one dtype and one shape.
void check_inputs(const opgen::Tensor& x) {
  opgen::check_floating(x, "x");
}

// y = scale(...) into y: contiguous, with x's shape, dtype and device.
void run_forward(const Tensor& y, const opgen::Tensor& x, double factor) {
  const Tensor x_contiguous = opgen::contiguous(x);
#ifdef OPGEN_WITH_CUDA
  if (y.is_cuda()) {
    forward_cuda(opgen::current_stream(), opgen::output(y), opgen::input(x_contiguous), factor);
    return;
  }
#endif
  forward_cpu(opgen::output(y), opgen::input(x_contiguous), factor);
}

}  // namespace

Tensor forward(const opgen::Tensor& x, double factor) {
  check_inputs(x);
#ifdef OPGEN_WITH_CUDA  // (the template's DeviceGuard exists only in CUDA builds)
  const opgen::DeviceGuard device_guard(x);
#endif
  Tensor y = opgen::empty(x, opgen::sizes(x));
  run_forward(y, x, factor);
  return y;
}

Tensor backward(const Tensor& grad, const opgen::Tensor& x, double factor) {
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
    backward_cuda(opgen::current_stream(), opgen::input(grad_contiguous), opgen::input(x_contiguous), opgen::output(dx), factor);
    return dx;
  }
#endif
  backward_cpu(opgen::input(grad_contiguous), opgen::input(x_contiguous), opgen::output(dx), factor);
  return dx;
}

OPGEN_LIBRARY_FRAGMENT(examples, m) {
  m.def("scale(Tensor x, float factor=2.0) -> Tensor");
  m.def("scale_backward(Tensor grad, Tensor x, float factor) -> Tensor");
}

// One host function per op serves both devices: it picks the kernel from the tensors' device.
OPGEN_LIBRARY_IMPL(examples, CPU, m) {
  m.impl("scale", OPGEN_KERNEL(forward));
  m.impl("scale_backward", OPGEN_KERNEL(backward));
}
#ifdef OPGEN_WITH_CUDA
OPGEN_LIBRARY_IMPL(examples, CUDA, m) {
  m.impl("scale", OPGEN_KERNEL(forward));
  m.impl("scale_backward", OPGEN_KERNEL(backward));
}
#endif

}  // namespace examples::scale
