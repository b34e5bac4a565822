// scale: schema and CPU kernel. The CUDA kernel is in scale_cuda.cu. The backward pass is scale
// itself (dx = grad * factor), wired up in opgen_examples/ops/scale.py.
#include "common/checks.h"
#include "common/cpu_loops.h"
#include "common/torch_api.h"
#include "scale/scale.h"

namespace examples::scale {

using opgen::Tensor;

Tensor forward_cpu(const Tensor& x, double factor) {
  opgen::check_floating(x, "x");
  const Tensor input = opgen::contiguous(x);
  Tensor y = opgen::empty_like(input);
  OPGEN_DISPATCH_FLOATING(input.scalar_type(), "scale_cpu", [&] {
    using opmath_t = opgen::opmath_t<scalar_t>;
    opgen::cpu::map(Scale<opmath_t>{static_cast<opmath_t>(factor)}, input.numel(), y.mutable_data_ptr<scalar_t>(),
                    input.const_data_ptr<scalar_t>());
  });
  return y;
}

OPGEN_LIBRARY_FRAGMENT(examples, m) {
  m.def("scale(Tensor x, float factor=2.0) -> Tensor");
}

OPGEN_LIBRARY_IMPL(examples, CPU, m) {
  m.impl("scale", OPGEN_KERNEL(forward_cpu));
}

}  // namespace examples::scale
