// gemm: schema and CPU kernel (C = A @ B). The CUDA kernels are in gemm_cuda.cu.
//
// The CPU path is the reference: at::mm (MKL/OpenBLAS or ATen's own loops). float16/bfloat16 are
// multiplied in float32 and rounded once: oneDNN's bfloat16 GEMM on a CPU with AMX turned the inf
// of a[i, k] into NaN across row i (seen on an H100 host), where IEEE math gives +-inf.
// The point of this op is its hand-written CUDA SGEMM.
#include <ATen/ATen.h>
#include <torch/library.h>

#include "gemm/gemm.h"

namespace examples::gemm {

at::Tensor forward_cpu(const at::Tensor& a, const at::Tensor& b) {
  check_inputs(a, b);
  if (a.scalar_type() == at::kHalf || a.scalar_type() == at::kBFloat16) {
    return at::mm(a.to(at::kFloat), b.to(at::kFloat)).to(a.scalar_type());
  }
  return at::mm(a, b);
}

TORCH_LIBRARY_FRAGMENT(examples, m) {
  m.def("gemm(Tensor a, Tensor b) -> Tensor");
  // The naive one-thread-per-output CUDA kernel (float32 only, no CPU kernel): the benchmark's
  // "seed" baseline, kept to show what the tiled kernel gains.
  m.def("gemm_naive(Tensor a, Tensor b) -> Tensor");
}

TORCH_LIBRARY_IMPL(examples, CPU, m) {
  m.impl("gemm", &forward_cpu);
}

}  // namespace examples::gemm
