// gemm: schema and CPU kernel (C = A @ B). The CUDA kernels are in gemm_cuda.cu.
//
// The CPU path is the reference: torch's matmul, which is mm for two matrices (MKL/OpenBLAS or
// torch's own loops). float16/bfloat16 are multiplied in float32 and rounded once: oneDNN's bfloat16
// GEMM on a CPU with AMX turned the inf of a[i, k] into NaN across row i (seen on an H100 host),
// where IEEE math gives +-inf.
// The point of this op is its hand-written CUDA SGEMM.
#include "common/torch_api.h"
#include "gemm/gemm.h"

namespace examples::gemm {

using opgen::Tensor;

Tensor forward_cpu(const Tensor& a, const Tensor& b) {
  check_inputs(a, b);
  if (a.scalar_type() == opgen::kHalf || a.scalar_type() == opgen::kBFloat16) {
    const Tensor c = torch::stable::matmul(torch::stable::to(a, opgen::kFloat), torch::stable::to(b, opgen::kFloat));
    return torch::stable::to(c, a.scalar_type());
  }
  return torch::stable::matmul(a, b);
}

OPGEN_LIBRARY_FRAGMENT(examples, m) {
  m.def("gemm(Tensor a, Tensor b) -> Tensor");
  // The naive one-thread-per-output CUDA kernel (float32 only, no CPU kernel): the benchmark's
  // "seed" baseline, kept to show what the tiled kernel gains.
  m.def("gemm_naive(Tensor a, Tensor b) -> Tensor");
}

OPGEN_LIBRARY_IMPL(examples, CPU, m) {
  m.impl("gemm", OPGEN_KERNEL(forward_cpu));
}

}  // namespace examples::gemm
