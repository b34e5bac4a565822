"""Mutants for tests/test_mutants.py: realistic bugs planted in the CPU kernels of examples/ and of a
generated project, one at a time, each of which the project's own tests must catch.

A mutant is data: the file, the exact text to find (it must occur exactly once, so a mutant gone stale
after an edit of the kernel fails loudly, naming the file), its replacement, and the ops to build and
test (the op's tests/test_<op>.py and the conformance suite filtered to it). Product code has no
switches for them. To add one, append a Mutant below; for a generated project, GENERATED_OPS says
which ops `opgen new` writes into it.
"""
from __future__ import annotations

from dataclasses import dataclass

EXAMPLES = "examples"
GENERATED = "generated"

# The generated project: default copier answers (package my_ops), then these `opgen new` ops.
GENERATED_OPS = {
    "silu": ["--kind", "elementwise"],  # the elementwise kind's placeholder math is SiLU
    "scaled_mul": ["--schema", "(Tensor a, Tensor b, float alpha) -> Tensor"],
    "row_sum": ["--kind", "reduction", "--schema", "(Tensor x, int dim=-1, bool keepdim=False) -> Tensor"],
}
# A declared op's host code and CPU loops are derived at build time from the project's templates:
# a bug there is planted in the template (and reaches every op of the kind, as a fix would).
DERIVED_REDUCTION = "my_ops/_opgen/templates/reduction.cpp.j2"


@dataclass(frozen=True)
class Edit:
    path: str  # relative to the project
    find: str  # must occur exactly once in the file
    replace: str


@dataclass(frozen=True)
class Mutant:
    id: str
    project: str  # EXAMPLES or GENERATED
    ops: tuple[str, ...]  # built with OPGEN_JIT (their dependencies come along) and tested
    bug: str  # the class of bug it stands for
    edits: tuple[Edit, ...]


def mutant(id: str, project: str, ops: str, bug: str, *edits: tuple[str, str, str]) -> Mutant:
    return Mutant(id, project, tuple(ops.split(",")), bug, tuple(Edit(*edit) for edit in edits))


# gemm's CPU path starts with its arguments; these mutants rename `a` to plant a changed copy of it.
_GEMM_FORWARD = "Tensor forward(const Tensor& a, const Tensor& b) {\n  check_inputs(a, b);\n"
_GEMM_A_COPY = ("Tensor forward(const Tensor& a_in, const Tensor& b) {\n  check_inputs(a_in, b);\n"
                "  Tensor a = torch::stable::clone(a_in);\n")

MUTANTS = [
    # ---- examples/ ------------------------------------------------------------------------------
    mutant("cpu_loop_off_by_one", EXAMPLES, "vector_add", "off-by-one: the last element of each chunk skipped",
           ("csrc/common/cpu_loops.h",
            "for (int64_t i = begin; i < end; ++i) {\n        y[i] =",
            "for (int64_t i = begin; i < end - 1; ++i) {\n        y[i] =")),
    mutant("bias_gelu_last_column", EXAMPLES, "fused_bias_gelu",
           "wrong index at a row edge: the last column takes the previous bias element (the broadcast read)",
           ("csrc/common/kernel_types.h",
            "return data[((i + offset) / inner) % period];",
            "const int64_t k = ((i + offset) / inner) % period;\n    return data[k > 0 && k == period - 1 ? k - 1 : k];")),
    mutant("gemm_skipped_k", EXAMPLES, "gemm", "skipped term: the last k of every dot product left out",
           ("csrc/gemm/gemm.cpp", _GEMM_FORWARD,
            (_GEMM_A_COPY + "  if (a.size(1) > 0) {\n"
             "    Tensor last_k = torch::stable::narrow(a, 1, a.size(1) - 1, 1);\n"
             "    torch::stable::zero_(last_k);\n  }\n"))),
    mutant("gemm_dropped_k_tile", EXAMPLES, "gemm", "dropped tile: the second 64-wide K tile left out",
           ("csrc/gemm/gemm.cpp", _GEMM_FORWARD,
            (_GEMM_A_COPY + "  if (a.size(1) > 64) {\n"
             "    Tensor tile = torch::stable::narrow(a, 1, 64, a.size(1) - 64 < 64 ? a.size(1) - 64 : 64);\n"
             "    torch::stable::zero_(tile);\n  }\n"))),
    mutant("gemm_16bit_accumulation", EXAMPLES, "gemm",
           "16-bit accumulation: float16/bfloat16 running sum rounded to the input dtype every 64 k",
           ("csrc/gemm/gemm.cpp",
            ("    const Tensor c = torch::stable::matmul(torch::stable::to(a, opgen::kFloat), "
             "torch::stable::to(b, opgen::kFloat));\n"
             "    return torch::stable::to(c, a.scalar_type());\n"),
            ("    Tensor a32 = torch::stable::to(a, opgen::kFloat);\n"
             "    Tensor b32 = torch::stable::to(b, opgen::kFloat);\n"
             "    const int64_t K = a.size(1);\n"
             "    Tensor c = torch::stable::new_zeros(a32, {a.size(0), b.size(1)}, a.scalar_type());\n"
             "    for (int64_t k0 = 0; k0 < K; k0 += 64) {\n"
             "      const int64_t len = K - k0 < 64 ? K - k0 : 64;\n"
             "      const Tensor part = torch::stable::matmul(torch::stable::narrow(a32, 1, k0, len),\n"
             "                                                torch::stable::narrow(b32, 0, k0, len));\n"
             "      const Tensor sum = torch::stable::subtract(torch::stable::to(c, opgen::kFloat), part, -1.0);\n"
             "      c = torch::stable::to(sum, a.scalar_type());\n"
             "    }\n"
             "    return c;\n"))),
    mutant("linear_gelu_16bit_accumulation", EXAMPLES, "fused_linear_gelu",
           "16-bit accumulation: the GEMM's running sum rounded to the input dtype every 64 k",
           ("csrc/fused_linear_gelu/fused_linear_gelu.cpp",
            "  at::Tensor y = at::addmm(bias, x2d, weight.t()).contiguous();",
            ("  const at::ScalarType acc = at::isReducedFloatingType(x.scalar_type()) ? at::kFloat : x.scalar_type();\n"
             "  at::Tensor y = bias.expand({x2d.size(0), weight.size(0)}).clone(at::MemoryFormat::Contiguous);\n"
             "  for (int64_t k0 = 0; k0 < x2d.size(1); k0 += 64) {\n"
             "    const int64_t len = std::min<int64_t>(64, x2d.size(1) - k0);\n"
             "    y = at::addmm(y.to(acc), x2d.narrow(1, k0, len).to(acc), weight.narrow(1, k0, len).t().to(acc))\n"
             "            .to(x.scalar_type()).contiguous();\n"
             "  }"))),
    mutant("gelu_backward_sign", EXAMPLES, "gelu_approx", "sign flip in a backward: the x * ds/dx term subtracted",
           ("csrc/gelu_approx/gelu_approx.h",
            "return grad * (s + xc * slope * s * (e * s));",
            "return grad * (s - xc * slope * s * (e * s));")),
    mutant("moe_skipped_expert", EXAMPLES, "moe", "off-by-one: the last expert's tokens never computed",
           ("csrc/moe/moe.cpp",
            "for (int64_t e = 0; e < s.experts; ++e) {",
            "for (int64_t e = 0; e < s.experts - 1; ++e) {")),
    mutant("sort_descending_tie_order", EXAMPLES, "bitonic_sort",
           "wrong tie order: descending sort as a reversed ascending one (equal values in reverse order)",
           ("csrc/bitonic_sort/bitonic_sort.cpp",
            "Item::make(key_of(row[i], descending), static_cast<uint32_t>(i));",
            "Item::make(key_of(row[i], false), static_cast<uint32_t>(i));"),
           ("csrc/bitonic_sort/bitonic_sort.cpp",
            "std::sort(items.begin(), items.end());",
            ("std::sort(items.begin(), items.end());\n      if (descending) {\n"
             "        std::reverse(items.begin(), items.end());\n      }"))),
    # ---- a generated project --------------------------------------------------------------------
    mutant("silu_backward_sign", GENERATED, "silu", "sign flip in a backward: the x * ds/dx term subtracted",
           ("csrc/silu/silu.h",
            "return grad * s * (T(1) + x * (T(1) - s));",
            "return grad * s * (T(1) - x * (T(1) - s));")),
    mutant("scaled_mul_backward_sign", GENERATED, "scaled_mul", "sign flip in a backward: b's gradient negated",
           ("csrc/scaled_mul/scaled_mul.h",
            "return {grad * b * alpha, grad * a * alpha};",
            "return {grad * b * alpha, -grad * a * alpha};")),
    mutant("reduction_off_by_one", GENERATED, "row_sum", "off-by-one: the last term of each row's sum skipped",
           (DERIVED_REDUCTION,
            "for (int64_t j = 0; j < cols; ++j) {",
            "for (int64_t j = 0; j < cols - 1; ++j) {")),
    mutant("reduction_16bit_accumulation", GENERATED, "row_sum",
           "16-bit accumulation: float16/bfloat16 rows summed in the storage type",
           (DERIVED_REDUCTION,
            '"{{ op }}_cpu", [&] {\n    using acc_t = opgen::opmath_t<scalar_t>;',
            '"{{ op }}_cpu", [&] {\n    using acc_t = scalar_t;')),
    mutant("reduction_backward_row_edge", GENERATED, "row_sum",
           "wrong index at a row edge: each row's first gradient takes the previous row's grad",
           (DERIVED_REDUCTION,
            "static_cast<acc_t>(gr[i / cols])",
            "static_cast<acc_t>(gr[(i > 0 ? i - 1 : 0) / cols])")),
]
