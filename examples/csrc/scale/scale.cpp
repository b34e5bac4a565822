// scale: schema and CPU kernel. The CUDA kernel is in scale_cuda.cu. The backward pass is scale
// itself (dx = grad * factor), wired up in opgen_examples/ops/scale.py.
#include <ATen/ATen.h>
#include <ATen/Dispatch.h>
#include <ATen/OpMathType.h>
#include <torch/library.h>

#include "common/checks.h"
#include "common/cpu_loops.h"
#include "scale/scale.h"

namespace examples::scale {

at::Tensor forward_cpu(const at::Tensor& x, double factor) {
  opgen::check_floating(x, "x");
  const at::Tensor input = x.contiguous();
  at::Tensor y = at::empty(input.sizes(), input.options());
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, input.scalar_type(), "scale_cpu", [&] {
    using opmath_t = at::opmath_type<scalar_t>;
    opgen::cpu::map(Scale<opmath_t>{static_cast<opmath_t>(factor)}, input.numel(), y.mutable_data_ptr<scalar_t>(),
                    input.const_data_ptr<scalar_t>());
  });
  return y;
}

TORCH_LIBRARY_FRAGMENT(examples, m) {
  m.def("scale(Tensor x, float factor=2.0) -> Tensor");
}

TORCH_LIBRARY_IMPL(examples, CPU, m) {
  m.impl("scale", &forward_cpu);
}

}  // namespace examples::scale
