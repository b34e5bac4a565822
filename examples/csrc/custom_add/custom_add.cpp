// custom_add: c = a + b on the CPU, the seed's first C++ op; the declaration in
// opgen_examples/ops/custom_add.py registers it. A CPU-only op: there is no CUDA kernel, and CUDA
// inputs reach reject_cuda below (in CUDA builds), which says so (instead of the dispatcher's
// generic "could not run with arguments from the CUDA backend").
#include "common/checks.h"
#include "common/cpu_loops.h"
#include "common/torch_api.h"

namespace examples::custom_add {

using opgen::Tensor;

Tensor forward_cpu(const Tensor& a, const Tensor& b) {
  opgen::check_floating(a, "a");
  opgen::check_like(b, "b", a, "a");
  const Tensor lhs = opgen::contiguous(a);
  const Tensor rhs = opgen::contiguous(b);
  Tensor c = opgen::empty_like(lhs);
  OPGEN_DISPATCH_FLOATING(lhs.scalar_type(), "custom_add_cpu", [&] {
    // Half and bfloat16 are added in float and rounded once (cpu::map converts to the op-math type).
    opgen::cpu::map([](auto x, auto y) { return x + y; }, lhs.numel(), c.mutable_data_ptr<scalar_t>(),
                    lhs.const_data_ptr<scalar_t>(), rhs.const_data_ptr<scalar_t>());
  });
  return c;
}

Tensor reject_cuda(const Tensor& a, const Tensor& b) {
  const bool a_on_cpu = a.is_cpu();  // the dispatcher came here: a or b is a CUDA tensor
  OPGEN_CHECK(false, "custom_add runs on the CPU only: ", a_on_cpu ? "b" : "a", " is on ",
              opgen::device_name(a_on_cpu ? b : a), "; use vector_add for CUDA tensors");
  return Tensor();
}

}  // namespace examples::custom_add
