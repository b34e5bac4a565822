// fused_linear_gelu: CUDA kernel, on the current stream of the input's device.
//
// float16/bfloat16: one cuBLASLt GEMM whose epilogue adds the bias and applies the tanh GELU to the float accumulator
// before the single rounding to the output dtype (CUBLASLT_EPILOGUE_GELU_BIAS), through the public
// ATen op at::_addmm_activation(bias, x, weight^T, 1, 1, use_gelu=true) (aten/src/ATen/native/cuda/Blas.cpp):
//   - it takes the Lt path for a 1-D contiguous bias, a row-major result and M, K, N > 1 (unless
//     DISABLE_ADDMM_CUDA_LT=1); otherwise, or if cuBLASLt offers no algorithm, it falls back to a
//     cuBLAS GEMM + at::gelu_(y, "tanh") (the same function, one more pass over y);
//   - float16/bfloat16 honour the reduced-precision-reduction flags, like nn.Linear; float32 (via addmm)
//     uses TF32 exactly when torch.backends.cuda.matmul.allow_tf32 says so.
// So the output matches eager nn.Linear + GELU(tanh) to rounding, in one kernel instead of two.
// float32 with a batch of at most 32 rows takes one kernel of our own that streams the weight once
// (skinny_linear_gelu.cuh), in full float32 whatever the TF32 flag says: on an H100 at 32x768x3072
// it took 25 us against eager's 50 us. (In bfloat16 the same kernel took 51 us, the Lt epilogue 27.)
// Larger float32 batches, float64 and in_features == 0 take addmm + the shared GELU kernel (see forward_cuda);
// float32 batches of at most 64 rows with out_features not a multiple of 4 take addmm into 16-byte padded rows
// + at::gelu (see pads_output_rows).
#include "common/use_aten.h"  // on the full ATen API: see docs/index.md for why

#include <ATen/Dispatch.h>
#include <ATen/OpMathType.h>
#include <ATen/cuda/CUDAContextLight.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/_addmm_activation.h>
#include <ATen/ops/addmm.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/gelu.h>
#include <c10/cuda/CUDAGuard.h>

#include <type_traits>

#include "common/elementwise.cuh"
#include "fused_linear_gelu/fused_linear_gelu.h"
#include "fused_linear_gelu/skinny_linear_gelu.cuh"
#include "gelu_approx/gelu_approx.h"

namespace examples::fused_linear_gelu {
namespace {

// CUDA's type with the layout of torch's scalar_t.
template <typename scalar_t>
using CudaType = std::conditional_t<std::is_same_v<scalar_t, c10::Half>, __half,
                                    std::conditional_t<std::is_same_v<scalar_t, c10::BFloat16>, __nv_bfloat16, scalar_t>>;

// cuBLAS's SGEMM slows down when the output's rows are not 16-byte aligned (out_features % 4 != 0)
// and the batch is small: on an H100, 33 x 1000 -> 3001 took 43.5 us, 26.6 us into rows padded to
// 3004 (what torch.compile's pad_mm does); 64 rows: 43.7 against 27.2 us. From 512 rows on padding
// was slower (82 against 89 us at 512 x 1000 -> 3001), so only small batches take it.
constexpr int64_t kPaddedRowsMaxBatch = 64;

bool pads_output_rows(const at::Tensor& x2d, const at::Tensor& weight) {
  return x2d.scalar_type() == at::kFloat && x2d.size(0) <= kPaddedRowsMaxBatch && weight.size(0) % 4 != 0;
}

// addmm into rows padded to 16 bytes, then GELU from that strided view into a contiguous y.
at::Tensor padded_linear_then_gelu(const at::Tensor& x2d, const at::Tensor& weight, const at::Tensor& bias) {
  const int64_t features = weight.size(0);
  const at::Tensor padded = at::empty({x2d.size(0), (features + 3) / 4 * 4}, x2d.options());
  at::Tensor z = padded.narrow(1, 0, features);
  at::addmm_out(z, bias, x2d, weight.t());
  at::Tensor y = at::empty({x2d.size(0), features}, x2d.options());
  return at::gelu_out(y, z, "tanh");  // the same tanh GELU as the shared functor, in float
}

// addmm, then the shared GELU functor in a second pass over y.
at::Tensor linear_then_gelu(const at::Tensor& x2d, const at::Tensor& weight, const at::Tensor& bias) {
  if (pads_output_rows(x2d, weight)) {
    return padded_linear_then_gelu(x2d, weight, bias);
  }
  const at::Tensor z = at::addmm(bias, x2d, weight.t());  // fresh and contiguous
  at::Tensor y = at::empty_like(z);
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, z.scalar_type(), "fused_linear_gelu_cuda", [&] {
    // The map takes CUDA's 16-bit types (c10's would also match c10::convert, by argument lookup).
    using cuda_t = CudaType<scalar_t>;
    opgen::cuda::launch_map(at::cuda::getCurrentCUDAStream(), gelu_approx::Forward<at::opmath_type<scalar_t>>{},
                            z.numel(), reinterpret_cast<cuda_t*>(y.mutable_data_ptr<scalar_t>()),
                            reinterpret_cast<const cuda_t*>(z.const_data_ptr<scalar_t>()));
  });
  return y;
}

// The small-batch kernel (float32); it reads rows through their stride, so only the last dim must be dense.
at::Tensor skinny_linear_gelu(const at::Tensor& x2d, const at::Tensor& weight, const at::Tensor& bias) {
  const at::Tensor x_rows = x2d.stride(1) == 1 ? x2d : x2d.contiguous();
  const at::Tensor weight_rows = weight.stride(1) == 1 ? weight : weight.contiguous();
  at::Tensor y = at::empty({x2d.size(0), weight.size(0)}, x2d.options());
  if (y.numel() == 0) {
    return y;
  }
  skinny::launch<float>(x_rows, weight_rows, bias, y);
  return y;
}

}  // namespace

at::Tensor forward_cuda(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
  check_arguments(x, weight, bias);
  const c10::cuda::CUDAGuard device_guard(x.device());
  const at::Tensor x2d = as_matrix(x);
  if (x.scalar_type() == at::kFloat && x2d.size(0) <= skinny::kSkinnyMaxBatch && x2d.size(1) > 0) {
    return skinny_linear_gelu(x2d, weight, bias).view(output_shape(x, weight));
  }
  if (x.scalar_type() == at::kFloat || x.scalar_type() == at::kDouble || x2d.size(1) == 0) {
    // float32/float64: cuBLASLt's GELU epilogue is an approximation of its own, off by up to ~1e-4
    // relative on an H100 (measured in the moe example) and no faster than addmm + GELU for float32
    // there (0.92 vs 0.84 ms at 8192x768x3072); the shared functor keeps float accuracy and gradcheck.
    // in_features == 0: _addmm_activation returns the bias without the GELU for an empty reduction.
    return linear_then_gelu(x2d, weight, bias).view(output_shape(x, weight));
  }
  // A contiguous bias keeps the fused Lt path; weight.t() is a free transposed view (cuBLAS reads it as is).
  const at::Tensor y = at::_addmm_activation(bias.contiguous(), x2d, weight.t(), /*beta=*/1, /*alpha=*/1,
                                             /*use_gelu=*/true);
  return y.view(output_shape(x, weight));
}

}  // namespace examples::fused_linear_gelu
