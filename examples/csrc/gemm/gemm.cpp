// gemm: schema and CPU kernel. The CUDA kernel is in gemm_cuda.cu.
// A blank op: y = x, element by element. Change the schema, both kernels, the fake kernel and
// the autograd formula in opgen_examples/ops/gemm.py together.
#include <ATen/ATen.h>
#include <ATen/Dispatch.h>
#include <torch/library.h>

#include "common/checks.h"

namespace examples::gemm {

at::Tensor forward_cpu(const at::Tensor& x) {
  opgen::check_floating(x, "x");
  const at::Tensor input = x.contiguous();
  at::Tensor y = at::empty_like(input);
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, input.scalar_type(), "gemm_cpu", [&] {
    const scalar_t* in = input.const_data_ptr<scalar_t>();
    scalar_t* out = y.mutable_data_ptr<scalar_t>();
    for (int64_t i = 0; i < input.numel(); ++i) {
      out[i] = in[i];
    }
  });
  return y;
}

TORCH_LIBRARY_FRAGMENT(examples, m) {
  m.def("gemm(Tensor x) -> Tensor");
}

TORCH_LIBRARY_IMPL(examples, CPU, m) {
  m.impl("gemm", &forward_cpu);
}

}  // namespace examples::gemm
