// fused_relu_scale_naive: the seed's kernel (fused_relu_scale_naive_cuda.cu), kept as a benchmark
// baseline. CUDA only, float32 only, fewer than 2^31 elements (its index is an int).
// fused_relu_scale itself is declared in opgen_examples/ops/fused_relu_scale.py: its glue is derived, and
// the declaration registers naive too (variants=).
#include <limits>

#include "common/checks.h"
#include "common/torch_api.h"

namespace examples::fused_relu_scale {

using opgen::Buffer;
using opgen::Tensor;

#ifdef OPGEN_WITH_CUDA
// In fused_relu_scale_naive_cuda.cu.
void naive_cuda(opgen::CudaStream stream, const Buffer& y, const Buffer& x, float alpha);

Tensor naive(const Tensor& x, double alpha) {
  opgen::check_dtype(x, "x", opgen::kFloat);
  OPGEN_CHECK(x.numel() <= std::numeric_limits<int>::max(), "fused_relu_scale_naive indexes with int: x has ",
              x.numel(), " elements, more than 2^31 - 1");
  const opgen::DeviceGuard device_guard(x);
  const Tensor input = opgen::contiguous(x);
  Tensor output = opgen::empty_like(input);
  naive_cuda(opgen::current_stream(), opgen::output(output), opgen::input(input), static_cast<float>(alpha));
  return output;
}
#endif

}  // namespace examples::fused_relu_scale
