// vector_add: schema, host code for CPU and CUDA (checks, allocation, device guard, stream) and the CPU
// kernel. The math is in vector_add.h, the CUDA kernels in vector_add_cuda.cu (ours) and
// vector_add_naive_cuda.cu (the seed's one-thread-per-element kernel, a benchmark baseline).
#include "common/checks.h"
#include "common/cpu_loops.h"
#include "common/torch_api.h"
#include "vector_add/vector_add.h"

#include <limits>
#include <tuple>

namespace examples::vector_add {

using opgen::Buffer;
using opgen::Tensor;

#ifdef OPGEN_WITH_CUDA
// In vector_add_cuda.cu (compiled by nvcc without torch's headers).
void forward_cuda(opgen::CudaStream stream, const Buffer& y, const Buffer& a, const Buffer& b);
void backward_cuda(opgen::CudaStream stream, const Buffer& grad, const Buffer& a, const Buffer& b, const Buffer& da, const Buffer& db);
// In vector_add_naive_cuda.cu.
void naive_cuda(opgen::CudaStream stream, const Buffer& c, const Buffer& a, const Buffer& b);
#endif

namespace {

void forward_cpu(const Buffer& y, const Buffer& a, const Buffer& b) {
  OPGEN_DISPATCH_FLOATING(static_cast<opgen::ScalarType>(y.dtype), "vector_add_cpu", [&] {
    using T = opgen::opmath_t<scalar_t>;
    opgen::cpu::map(Forward<T>{}, y.numel, y.as<scalar_t>(), a.as<const scalar_t>(), b.as<const scalar_t>());
  });
}

void backward_cpu(const Buffer& grad, const Buffer& a, const Buffer& b, const Buffer& da, const Buffer& db) {
  OPGEN_DISPATCH_FLOATING(static_cast<opgen::ScalarType>(grad.dtype), "vector_add_backward_cpu", [&] {
    using T = opgen::opmath_t<scalar_t>;
    const opgen::Array<scalar_t*, 2> grads{{da.as<scalar_t>(), db.as<scalar_t>()}};
    opgen::cpu::map(Backward<T>{}, grad.numel, grads, grad.as<const scalar_t>(), a.as<const scalar_t>(), b.as<const scalar_t>());
  });
}

// Every tensor floating-point, on one device, with one dtype and one shape.
void check_inputs(const opgen::Tensor& a, const opgen::Tensor& b) {
  opgen::check_floating(a, "a");
  opgen::check_like(b, "b", a, "a");
}

// y = vector_add(...) into y: contiguous, with a's shape, dtype and device.
void run_forward(const Tensor& y, const opgen::Tensor& a, const opgen::Tensor& b) {
  const Tensor a_contiguous = opgen::contiguous(a);
  const Tensor b_contiguous = opgen::contiguous(b);
#ifdef OPGEN_WITH_CUDA
  if (y.is_cuda()) {
    forward_cuda(opgen::current_stream(), opgen::output(y), opgen::input(a_contiguous), opgen::input(b_contiguous));
    return;
  }
#endif
  forward_cpu(opgen::output(y), opgen::input(a_contiguous), opgen::input(b_contiguous));
}

}  // namespace

Tensor forward(const opgen::Tensor& a, const opgen::Tensor& b) {
  check_inputs(a, b);
#ifdef OPGEN_WITH_CUDA  // (the template's DeviceGuard exists only in CUDA builds)
  const opgen::DeviceGuard device_guard(a);
#endif
  Tensor y = opgen::empty(a, opgen::sizes(a));
  run_forward(y, a, b);
  return y;
}

// Writes into out (any strides): directly when it is contiguous, else through a buffer.
void forward_out(const opgen::Tensor& a, const opgen::Tensor& b, const Tensor& out) {
  check_inputs(a, b);
  opgen::check_like(out, "out", a, "a");
  opgen::check_no_internal_overlap(out, "out");
  opgen::check_output_memory(out, "out", a, "a");
  opgen::check_output_memory(out, "out", b, "b");
  const opgen::DeviceGuard device_guard(a);
  if (out.is_contiguous()) {
    run_forward(out, a, b);
    return;
  }
  const Tensor result = opgen::empty(a, opgen::sizes(a));
  run_forward(result, a, b);
  opgen::copy_(out, result);
}

// The gradients the caller needs (needs_*); the others come back empty.
std::tuple<Tensor, Tensor> backward(const Tensor& grad, const opgen::Tensor& a, const opgen::Tensor& b, bool needs_a, bool needs_b) {
  check_inputs(a, b);
  opgen::check_like(grad, "grad", a, "a");
#ifdef OPGEN_WITH_CUDA  // (the template's DeviceGuard exists only in CUDA builds)
  const opgen::DeviceGuard device_guard(a);
#endif
  const Tensor grad_contiguous = opgen::contiguous(grad);
  const Tensor a_contiguous = opgen::contiguous(a);
  const Tensor b_contiguous = opgen::contiguous(b);
  Tensor da = opgen::empty(a, needs_a ? opgen::sizes(a) : std::vector<int64_t>{0});
  Tensor db = opgen::empty(a, needs_b ? opgen::sizes(a) : std::vector<int64_t>{0});
#ifdef OPGEN_WITH_CUDA
  if (grad.is_cuda()) {
    backward_cuda(opgen::current_stream(), opgen::input(grad_contiguous), opgen::input(a_contiguous), opgen::input(b_contiguous), needs_a ? opgen::output(da) : Buffer{}, needs_b ? opgen::output(db) : Buffer{});
    return {da, db};
  }
#endif
  backward_cpu(opgen::input(grad_contiguous), opgen::input(a_contiguous), opgen::input(b_contiguous), needs_a ? opgen::output(da) : Buffer{}, needs_b ? opgen::output(db) : Buffer{});
  return {da, db};
}

#ifdef OPGEN_WITH_CUDA
// The seed's kernel: CUDA only, float32 only, fewer than 2^31 elements (its index is an int).
Tensor naive(const Tensor& a, const Tensor& b) {
  opgen::check_dtype(a, "a", opgen::kFloat);
  opgen::check_same_device(a, "a", b, "b");
  opgen::check_same_dtype(a, "a", b, "b");
  opgen::check_same_shape(a, "a", b, "b");
  OPGEN_CHECK(a.numel() <= std::numeric_limits<int>::max(), "vector_add_naive indexes with int: a has ",
              a.numel(), " elements, more than 2^31 - 1");
  const opgen::DeviceGuard device_guard(a);
  const Tensor lhs = opgen::contiguous(a);
  const Tensor rhs = opgen::contiguous(b);
  Tensor c = opgen::empty_like(lhs);
  naive_cuda(opgen::current_stream(), opgen::output(c), opgen::input(lhs), opgen::input(rhs));
  return c;
}
#endif

OPGEN_LIBRARY_FRAGMENT(examples, m) {
  m.def("vector_add(Tensor a, Tensor b) -> Tensor");
  m.def("vector_add_out(Tensor a, Tensor b, *, Tensor(a!) out) -> ()");
  m.def("vector_add_backward(Tensor grad, Tensor a, Tensor b, bool needs_a, bool needs_b) -> (Tensor, Tensor)");
  // CUDA only, float32 only, fewer than 2^31 elements: the seed's kernel, kept to benchmark against.
  m.def("vector_add_naive(Tensor a, Tensor b) -> Tensor");
}

// One host function per op serves both devices: it picks the kernel from the tensors' device.
OPGEN_LIBRARY_IMPL(examples, CPU, m) {
  m.impl("vector_add", OPGEN_KERNEL(forward));
  m.impl("vector_add_out", OPGEN_KERNEL(forward_out));
  m.impl("vector_add_backward", OPGEN_KERNEL(backward));
}
#ifdef OPGEN_WITH_CUDA
OPGEN_LIBRARY_IMPL(examples, CUDA, m) {
  m.impl("vector_add", OPGEN_KERNEL(forward));
  m.impl("vector_add_out", OPGEN_KERNEL(forward_out));
  m.impl("vector_add_backward", OPGEN_KERNEL(backward));
  m.impl("vector_add_naive", OPGEN_KERNEL(naive));
}
#endif

}  // namespace examples::vector_add
