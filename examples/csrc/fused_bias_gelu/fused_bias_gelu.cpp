// fused_bias_gelu: schema and CPU kernels. The CUDA kernels are in fused_bias_gelu_cuda.cu.
#include <algorithm>

#include "common/cpu_loops.h"
#include "common/torch_api.h"
#include "fused_bias_gelu/fused_bias_gelu.h"

namespace examples::fused_bias_gelu {

using opgen::Tensor;

namespace {

// out[r][c] = op(in[r][c]..., bias[c]) over rows x cols, row-major, in parallel over rows.
template <typename Op, typename scalar_t, typename... in_t>
void map_rows(const Op& op, int64_t rows, int64_t cols, scalar_t* out, const scalar_t* bias, const in_t*... in) {
  using opmath_t = opgen::opmath_t<scalar_t>;
  const int64_t grain_rows = std::max<int64_t>(1, 32768 / cols);
  opgen::cpu::parallel_for(rows, grain_rows, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t row = r * cols;
      for (int64_t c = 0; c < cols; ++c) {
        out[row + c] =
            static_cast<scalar_t>(op(static_cast<opmath_t>(in[row + c])..., static_cast<opmath_t>(bias[c])));
      }
    }
  });
}

}  // namespace

Tensor forward_cpu(const Tensor& x, const Tensor& bias) {
  check_arguments(x, bias);
  const Tensor input = opgen::contiguous(x);
  const Tensor b = opgen::contiguous(bias);
  Tensor y = opgen::empty_like(input);
  if (input.numel() == 0) {
    return y;
  }
  const int64_t cols = input.size(-1);
  OPGEN_DISPATCH_FLOATING(input.scalar_type(), "fused_bias_gelu_cpu", [&] {
    map_rows(Forward{}, input.numel() / cols, cols, y.mutable_data_ptr<scalar_t>(), b.const_data_ptr<scalar_t>(),
             input.const_data_ptr<scalar_t>());
  });
  return y;
}

Tensor backward_cpu(const Tensor& grad, const Tensor& x, const Tensor& bias) {
  check_arguments(x, bias);
  opgen::check_same_device(grad, "grad", x, "x");
  opgen::check_same_dtype(grad, "grad", x, "x");
  opgen::check_same_shape(grad, "grad", x, "x");
  const Tensor g = opgen::contiguous(grad);
  const Tensor input = opgen::contiguous(x);
  const Tensor b = opgen::contiguous(bias);
  Tensor dz = opgen::empty_like(input);
  if (input.numel() == 0) {
    return dz;
  }
  const int64_t cols = input.size(-1);
  OPGEN_DISPATCH_FLOATING(input.scalar_type(), "fused_bias_gelu_backward_cpu", [&] {
    map_rows(Backward{}, input.numel() / cols, cols, dz.mutable_data_ptr<scalar_t>(), b.const_data_ptr<scalar_t>(),
             g.const_data_ptr<scalar_t>(), input.const_data_ptr<scalar_t>());
  });
  return dz;
}

OPGEN_LIBRARY_FRAGMENT(examples, m) {
  m.def("fused_bias_gelu(Tensor x, Tensor bias) -> Tensor");
  m.def("fused_bias_gelu_backward(Tensor grad, Tensor x, Tensor bias) -> Tensor");
}

OPGEN_LIBRARY_IMPL(examples, CPU, m) {
  m.impl("fused_bias_gelu", OPGEN_KERNEL(forward_cpu));
  m.impl("fused_bias_gelu_backward", OPGEN_KERNEL(backward_cpu));
}

}  // namespace examples::fused_bias_gelu
