// fused_bias_gelu: schemas, host code for CPU and CUDA (checks, allocation, device guard, stream)
// and the CPU kernels. The math is in fused_bias_gelu.h, the CUDA kernels in fused_bias_gelu_cuda.cu.
#include <algorithm>

#include "common/checks.h"
#include "common/cpu_loops.h"
#include "common/torch_api.h"
#include "fused_bias_gelu/fused_bias_gelu.h"

namespace examples::fused_bias_gelu {

using opgen::Buffer;
using opgen::Tensor;

#ifdef OPGEN_WITH_CUDA
// In fused_bias_gelu_cuda.cu (compiled by nvcc without torch's headers). x is rows x cols, contiguous.
void forward_cuda(opgen::CudaStream stream, const Buffer& y, const Buffer& x, const Buffer& bias, int64_t cols);
void backward_cuda(opgen::CudaStream stream, const Buffer& dz, const Buffer& grad, const Buffer& x,
                   const Buffer& bias, int64_t cols);
#endif

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

// x: floating, at least 1-D; bias: 1-D with x.size(-1) elements, same dtype and device as x.
void check_arguments(const Tensor& x, const Tensor& bias) {
  opgen::check_floating(x, "x");
  OPGEN_CHECK(x.dim() >= 1, "x must have at least 1 dimension (the one bias is added along), got a scalar");
  opgen::check_same_device(bias, "bias", x, "x");
  opgen::check_same_dtype(bias, "bias", x, "x");
  opgen::check_dim(bias, "bias", 1);
  OPGEN_CHECK(bias.size(0) == x.size(-1), "bias must have x.size(-1) = ", x.size(-1), " elements, got ",
              bias.size(0));
}

}  // namespace

Tensor forward(const Tensor& x, const Tensor& bias) {
  check_arguments(x, bias);
#ifdef OPGEN_WITH_CUDA
  const opgen::DeviceGuard device_guard(x);
#endif
  const Tensor input = opgen::contiguous(x);
  const Tensor b = opgen::contiguous(bias);
  Tensor y = opgen::empty_like(input);
  if (input.numel() == 0) {
    return y;
  }
  const int64_t cols = input.size(-1);
#ifdef OPGEN_WITH_CUDA
  if (input.is_cuda()) {
    forward_cuda(opgen::current_stream(), opgen::output(y), opgen::input(input), opgen::input(b), cols);
    return y;
  }
#endif
  OPGEN_DISPATCH_FLOATING(input.scalar_type(), "fused_bias_gelu_cpu", [&] {
    map_rows(Forward{}, input.numel() / cols, cols, y.mutable_data_ptr<scalar_t>(), b.const_data_ptr<scalar_t>(),
             input.const_data_ptr<scalar_t>());
  });
  return y;
}

Tensor backward(const Tensor& grad, const Tensor& x, const Tensor& bias) {
  check_arguments(x, bias);
  opgen::check_like(grad, "grad", x, "x");
#ifdef OPGEN_WITH_CUDA
  const opgen::DeviceGuard device_guard(x);
#endif
  const Tensor g = opgen::contiguous(grad);
  const Tensor input = opgen::contiguous(x);
  const Tensor b = opgen::contiguous(bias);
  Tensor dz = opgen::empty_like(input);
  if (input.numel() == 0) {
    return dz;
  }
  const int64_t cols = input.size(-1);
#ifdef OPGEN_WITH_CUDA
  if (input.is_cuda()) {
    backward_cuda(opgen::current_stream(), opgen::output(dz), opgen::input(g), opgen::input(input), opgen::input(b),
                  cols);
    return dz;
  }
#endif
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

// One host function per op serves both devices: it picks the kernel from the tensors' device.
OPGEN_LIBRARY_IMPL(examples, CPU, m) {
  m.impl("fused_bias_gelu", OPGEN_KERNEL(forward));
  m.impl("fused_bias_gelu_backward", OPGEN_KERNEL(backward));
}
#ifdef OPGEN_WITH_CUDA
OPGEN_LIBRARY_IMPL(examples, CUDA, m) {
  m.impl("fused_bias_gelu", OPGEN_KERNEL(forward));
  m.impl("fused_bias_gelu_backward", OPGEN_KERNEL(backward));
}
#endif

}  // namespace examples::fused_bias_gelu
