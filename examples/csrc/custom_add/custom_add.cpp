// custom_add: c = a + b on the CPU, the seed's first C++ op. A CPU-only op: there is no CUDA kernel,
// and CUDA inputs reach reject_cuda below, which says so (instead of the dispatcher's generic
// "could not run with arguments from the CUDA backend").
#include <ATen/ATen.h>
#include <ATen/Dispatch.h>
#include <torch/library.h>

#include "common/checks.h"
#include "common/cpu_loops.h"

namespace examples::custom_add {

at::Tensor forward_cpu(const at::Tensor& a, const at::Tensor& b) {
  opgen::check_floating(a, "a");
  opgen::check_same_dtype(a, "a", b, "b");
  opgen::check_same_shape(a, "a", b, "b");
  const at::Tensor lhs = a.contiguous();
  const at::Tensor rhs = b.contiguous();
  at::Tensor c = at::empty(lhs.sizes(), lhs.options());
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, lhs.scalar_type(), "custom_add_cpu", [&] {
    // Half and bfloat16 are added in float and rounded once (cpu::map converts to the op-math type).
    opgen::cpu::map([](auto x, auto y) { return x + y; }, lhs.numel(), c.mutable_data_ptr<scalar_t>(),
                    lhs.const_data_ptr<scalar_t>(), rhs.const_data_ptr<scalar_t>());
  });
  return c;
}

at::Tensor reject_cuda(const at::Tensor& a, const at::Tensor& b) {
  const bool a_on_cpu = a.device().is_cpu();  // the dispatcher came here: a or b is a CUDA tensor
  TORCH_CHECK(false, "custom_add runs on the CPU only: ", a_on_cpu ? "b" : "a", " is on ",
              (a_on_cpu ? b : a).device(), "; use vector_add for CUDA tensors");
  return at::Tensor();
}

TORCH_LIBRARY_FRAGMENT(examples, m) {
  m.def("custom_add(Tensor a, Tensor b) -> Tensor");
}

TORCH_LIBRARY_IMPL(examples, CPU, m) {
  m.impl("custom_add", &forward_cpu);
}

TORCH_LIBRARY_IMPL(examples, CUDA, m) {
  m.impl("custom_add", &reject_cuda);
}

}  // namespace examples::custom_add
