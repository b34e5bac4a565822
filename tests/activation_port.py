"""Hugging Face kernels-community's `activation` package (vLLM's activation kernels) ported onto an
opgen project: `opgen new` for each of its 11 ops, then only the edits below (the math and the
declarations), and a layers.py like the package's. Its upstream tests (tests/upstream/
kernels_community_activation, import lines edited) then run against the project.

    python tests/activation_port.py DEST    writes the ported project into DEST (for a GPU machine)
"""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

from ports import apply_edits, render, write_file

HERE = Path(__file__).resolve().parent
UPSTREAM_TESTS = HERE / "upstream" / "kernels_community_activation"

_ROW_PLACEHOLDER = (
    "    const T mean = row.sum(input.cols, [&](auto j) { return input[j]; }) / T(input.cols > 0 ? input.cols : 1);\n"
    "    row.for_each(y.cols, [&](auto j) { y.set(j, input[j] - mean); });\n"
)
_ROW_REFERENCE = "    return input - input.mean(dim=-1, keepdim=True)\n"

# The activations as vLLM's kernels compute them in float (a: the input in float): torch's own
# formulas, so that the gated ops equal torch's exactly, as the upstream tests ask.
SILU = "a / (T(1) + std::exp(-a))"
GELU = "a * T(0.5) * (T(1) + std::erf(a * T(M_SQRT1_2)))"
GELU_TANH = "T(0.5) * a * (T(1) + std::tanh(T(M_SQRT2 * M_2_SQRTPI * 0.5) * (a + T(0.044715) * (a * a * a))))"

# name -> (what it computes, the act-and-mul line, reference lines)
GATED = {
    "silu_and_mul": ("silu(x[..., :d]) * x[..., d:]", f"const T a = input[j]; y.set(j, input.round({SILU}) * input[j + y.cols]);",
                     "F.silu(input[..., :d]) * input[..., d:]"),
    "mul_and_silu": ("x[..., :d] * silu(x[..., d:])", f"const T a = input[j + y.cols]; y.set(j, input[j] * input.round({SILU}));",
                     "input[..., :d] * F.silu(input[..., d:])"),
    "gelu_and_mul": ("gelu(x[..., :d]) * x[..., d:]", f"const T a = input[j]; y.set(j, input.round({GELU}) * input[j + y.cols]);",
                     "F.gelu(input[..., :d]) * input[..., d:]"),
    "gelu_tanh_and_mul": ("gelu_tanh(x[..., :d]) * x[..., d:]",
                          f"const T a = input[j]; y.set(j, input.round({GELU_TANH}) * input[j + y.cols]);",
                          "F.gelu(input[..., :d], approximate=\"tanh\") * input[..., d:]"),
    "fatrelu_and_mul": ("threshold(x[..., :d]) * x[..., d:]",
                        "const T a = input[j]; y.set(j, (a > threshold ? a : T(0)) * input[j + y.cols]);",
                        "F.threshold(input[..., :d], threshold, 0.0) * input[..., d:]"),
}

# name -> (what it computes, the functor's return expression (x: the input in float), reference)
# gelu_new and gelu_fast round their intermediates to the dtype, as their kernels do (R: rounded<S>);
# their constants are the references' (in float the same as the kernels' 0.79788456f).
ELEMENTWISE = {
    "silu": ("silu(x)", "input / (T(1) + std::exp(-input))", "F.silu(input)"),
    "gelu": ("gelu(x)", "input * T(0.5) * (T(1) + std::erf(input * T(M_SQRT1_2)))", "F.gelu(input)"),
    "gelu_tanh": ("gelu(x, approximate=\"tanh\")",
                  "T(0.5) * input * (T(1) + std::tanh(T(M_SQRT2 * M_2_SQRTPI * 0.5) * (input + T(0.044715) * (input * input * input))))",
                  "F.gelu(input, approximate=\"tanh\")"),
    "gelu_quick": ("x * sigmoid(1.702 x)", "input / (T(1) + std::exp(T(-1.702) * input))", "input * torch.sigmoid(1.702 * input)"),
    "gelu_new": ("the GPT-2 GELU", "R(R(T(0.5) * input) * R(T(1) + R(std::tanh(R(T(M_2_SQRTPI / M_SQRT2) * R(input + R(T(0.044715) "
                 "* R(R(input * input) * input))))))))",
                 "0.5 * input * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (input + 0.044715 * input.pow(3.0))))"),
    "gelu_fast": ("the fast GELU", "R(R(T(0.5) * input) * R(T(1) + R(std::tanh(R(R(input * T(0.7978845608)) * R(T(1) + R(R(T(0.044715) "
                  "* input) * input)))))))",
                  "0.5 * input * (1.0 + torch.tanh(input * 0.7978845608 * (1.0 + 0.044715 * input * input)))"),
}
ROUNDED = ("gelu_new", "gelu_fast")  # declared with storage=True: Forward<T, S>
# 16-bit results several roundings away from the float64 reference (as upstream's kernels are)
LOOSE = "    tolerances={torch.float16: (5e-3, 2e-3), torch.bfloat16: (4e-2, 1e-2)},  # rounded like the kernels\n"

LAYERS = '''"""nn.Module layers over the activation ops, as kernels-community's activation package has them."""
import torch
from torch import nn

from . import ops


def _layer(name: str, gated: bool, doc: str):
    fn = getattr(ops, name)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        out = x.new_empty((*x.shape[:-1], x.shape[-1] // 2)) if gated else torch.empty_like(x)
        return fn(out, x, *self.args)

    def __init__(self, *args):
        nn.Module.__init__(self)
        self.args = args

    return type(doc, (nn.Module,), {"forward": forward, "__init__": __init__, "can_torch_compile": True})


SiluAndMul = _layer("silu_and_mul", True, "SiluAndMul")
MulAndSilu = _layer("mul_and_silu", True, "MulAndSilu")
GeluAndMul = _layer("gelu_and_mul", True, "GeluAndMul")
GeluTanhAndMul = _layer("gelu_tanh_and_mul", True, "GeluTanhAndMul")
FatreluAndMul = _layer("fatrelu_and_mul", True, "FatreluAndMul")
Silu = _layer("silu", False, "Silu")
Gelu = _layer("gelu", False, "Gelu")
GeluTanh = _layer("gelu_tanh", False, "GeluTanh")
FastGELU = _layer("gelu_fast", False, "FastGELU")
NewGELU = _layer("gelu_new", False, "NewGELU")
QuickGELU = _layer("gelu_quick", False, "QuickGELU")
'''


# Beside the package, a row-wise op of another family with a gradient and a broadcast weight: RMSNorm
# (as vLLM's rms_norm and torch.nn.functional.rms_norm compute it, with its backward).
RMS_NORM_SCHEMA = "(Tensor input, Tensor weight, float eps=1e-6) -> Tensor"  # torch.compile passes `eps` to an op named rms_norm
RMS_NORM = [
    ("// Placeholder math (each row minus its mean): write rms_norm's here and in reference().\n",
     "// y = x * weight / sqrt(mean(x^2) + eps), in float (double for float64).\n"),
    ("    const T mean = row.sum(input.cols, [&](auto j) { return input[j]; }) / T(input.cols > 0 ? input.cols : 1);\n"
     "    row.for_each(y.cols, [&](auto j) { y.set(j, input[j] - mean); });\n",
     "    const T scale = T(1) / std::sqrt(row.sum(input.cols, [&](auto j) { return input[j] * input[j]; }) /\n"
     "                                     T(input.cols > 0 ? input.cols : 1) + eps);\n"
     "    row.for_each(y.cols, [&](auto j) { y.set(j, input[j] * scale * weight[j]); });\n"),
    ("    const T mean = row.sum(grad.cols, [&](auto j) { return grad[j]; }) / T(grad.cols > 0 ? grad.cols : 1);\n"
     "    row.for_each(grad_input.cols, [&](auto j) { grad_input.set(j, grad[j] - mean); });\n"
     "    row.for_each(grad_weight.cols, [&](auto j) { grad_weight.set(j, T(0)); });  // the placeholder ignores weight\n",
     "    // dx = s (g w - x s^2 mean(g w x)), dw = g x s for s = 1 / sqrt(mean(x^2) + eps).\n"
     "    const T n = T(input.cols > 0 ? input.cols : 1);\n"
     "    const T scale = T(1) / std::sqrt(row.sum(input.cols, [&](auto j) { return input[j] * input[j]; }) / n + eps);\n"
     "    const T dot = row.sum(input.cols, [&](auto j) { return grad[j] * weight[j] * input[j]; }) / n;\n"
     "    row.for_each(input.cols, [&](auto j) {\n"
     "      grad_input.set(j, scale * (grad[j] * weight[j] - input[j] * scale * scale * dot));\n"
     "      grad_weight.set(j, grad[j] * input[j] * scale);\n"
     "    });\n"),
]
RMS_NORM_MODULE = [
    ('"""rms_norm: Say here in a sentence what it computes, row by row.', '"""rms_norm: x * weight / sqrt(mean(x^2) + eps), row by row.'),
    ("    return input - input.mean(dim=-1, keepdim=True)\n",
     "    return input * (input.square().mean(dim=-1, keepdim=True) + eps).rsqrt() * weight\n"),
    ('    out_cols="d",  # the result\'s row length: "d", "d/2" (a gated activation), "2*d"\n',
     '    broadcast=["weight"],  # one vector of d elements every row reads\n'
     "    # A sum of d squares in float: its error grows with the row (as torch's own rms_norm's does).\n"
     "    tolerances={torch.float32: (1e-5, 1e-6), torch.float64: (1e-12, 1e-13)},\n"),
    ("from torch import Tensor\n", "import torch\nfrom torch import Tensor\n"),
]


def opgen_commands() -> list[list[str]]:
    """The `opgen new` arguments, one op each (the package's, then rms_norm)."""
    commands = []
    for name in GATED:
        extra = ", float threshold=0.0" if name == "fatrelu_and_mul" else ""
        commands.append([name, "--kind", "rowwise", "--schema", f"(Tensor! out, Tensor input{extra}) -> ()"])
    for name in ELEMENTWISE:
        commands.append([name, "--schema", "(Tensor! out, Tensor input) -> ()"])
    commands.append(["rms_norm", "--kind", "rowwise", "--schema", RMS_NORM_SCHEMA])
    return commands


def _edits(package: str) -> dict[str, list[tuple[str, str]]]:
    """{file: [(what opgen wrote, what the port has)]}."""
    edits = {}
    for name, (what, line, reference) in GATED.items():
        edits[f"csrc/{name}/{name}.h"] = [
            (f"// Placeholder math (each row minus its mean): write {name}'s here and in reference().\n",
             f"// out = {what}, d = x.shape[-1] / 2; the activation rounded to the dtype, as torch's.\n"),
            (_ROW_PLACEHOLDER, f"    row.for_each(y.cols, [&](auto j) {{ {line} }});\n"),
        ]
        edits[f"{package}/ops/{name}.py"] = [
            (f'"""{name}: Say here in a sentence what it computes, row by row.', f'"""{name}: {what}, row by row.'),
            ("from torch import Tensor\n", "import torch.nn.functional as F\nfrom torch import Tensor\n"),
            (_ROW_REFERENCE, f"    d = input.shape[-1] // 2\n    return {reference}\n"),
            ('    out_cols="d",', '    out_cols="d/2",'),
        ]
    for name, (what, expression, reference) in ELEMENTWISE.items():
        rounded = name in ROUNDED
        header = [
            ("// Placeholder math (the product of the arguments): write " + name + "'s here and in reference().\n",
             f"// {what}{', each intermediate rounded to the dtype S as its kernel does' if rounded else ''}.\n"),
            ("    return input;\n", f"    return {expression};\n"),
        ]
        if rounded:
            header += [("template <typename T>\nstruct Forward {\n",
                        "template <typename T, typename S>\nstruct Forward {\n  OPGEN_HOST_DEVICE static T R(T v) { return opgen::rounded<S>(v); }\n")]
        edits[f"csrc/{name}/{name}.h"] = header
        module = [
            (f'"""{name}: Say here in a sentence what it computes.', f'"""{name}: {what}.'),
            ("from torch import Tensor\n", "import math\n\nimport torch\nimport torch.nn.functional as F\nfrom torch import Tensor\n"),
            ("    return input\n", f"    return {reference}\n"),
        ]
        if rounded:
            module.append(('    kind="elementwise",\n', '    kind="elementwise",\n    storage=True,\n' + LOOSE))
        edits[f"{package}/ops/{name}.py"] = module
    edits["csrc/rms_norm/rms_norm.h"] = RMS_NORM
    edits[f"{package}/ops/rms_norm.py"] = RMS_NORM_MODULE
    return edits


def apply(project: Path, package: str = "my_ops") -> dict[str, int]:
    """Edit what `opgen new` wrote into the port; {file: changed lines}. Writes layers.py and the upstream tests."""
    counts = apply_edits(project, _edits(package))
    layers = LAYERS.replace("from . import ops", f"from . import ops  # {package}'s op functions")
    counts[f"{package}/layers.py"] = write_file(project, f"{package}/layers.py", layers)
    shutil.copytree(UPSTREAM_TESTS, project / "tests" / "kernels_community_activation", dirs_exist_ok=True)
    return counts


if __name__ == "__main__":
    dest = Path(sys.argv[1]).resolve()
    render(HERE.parent, dest, opgen_commands())
    counts = apply(dest)
    package = sum(v for k, v in counts.items() if "rms_norm" not in k and not k.endswith("layers.py"))
    print(f"ported into {dest}: {package} lines of the package's math and declarations, "
          f"{counts['my_ops/layers.py']} of layers.py, rms_norm {counts['csrc/rms_norm/rms_norm.h'] + counts['my_ops/ops/rms_norm.py']}")
