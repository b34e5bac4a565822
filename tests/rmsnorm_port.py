"""Hugging Face kernels-community's `rmsnorm` package (an RMSNorm layer with its backward) ported onto
an opgen project whose package is `rmsnorm`: `opgen new` for its op, then only the edits below (the
math and the declaration), and a layers.py like the package's. Its upstream tests
(tests/upstream/kernels_community_rmsnorm, unedited) then run against the project.

Upstream has two ops, `apply_rms_norm(...) -> Tensor[]` (the result and a saved rstd) and
`apply_rms_norm_backward(...)`, tied together by a hand-written autograd.Function in layers.py. Here
one declared row-wise op carries both directions: its Backward functor is the autograd formula.

    python tests/rmsnorm_port.py DEST    writes the ported project into DEST (for a GPU machine)
"""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

from ports import apply_edits, render, write_file

HERE = Path(__file__).resolve().parent
UPSTREAM_TESTS = HERE / "upstream" / "kernels_community_rmsnorm"
PACKAGE = "rmsnorm"
OP = "apply_rms_norm"
SCHEMA = "(Tensor hidden_states, Tensor weight, float variance_epsilon) -> Tensor"

MATH = [
    (f"// Placeholder math (each row minus its mean): write {OP}'s here and in reference().\n",
     "// y = x * weight / sqrt(mean(x^2) + eps), in float (double for float64).\n"),
    ("    const T mean = row.sum(hidden_states.cols, [&](auto j) { return hidden_states[j]; }) /\n"
     "                   T(hidden_states.cols > 0 ? hidden_states.cols : 1);\n"
     "    row.for_each(y.cols, [&](auto j) { y.set(j, hidden_states[j] - mean); });\n",
     "    const T n = T(hidden_states.cols > 0 ? hidden_states.cols : 1);\n"
     "    const T scale = T(1) / std::sqrt(row.sum(hidden_states.cols, [&](auto j) {\n"
     "      return hidden_states[j] * hidden_states[j]; }) / n + variance_epsilon);\n"
     "    row.for_each(y.cols, [&](auto j) { y.set(j, hidden_states[j] * scale * weight[j]); });\n"),
    ("    const T mean = row.sum(grad.cols, [&](auto j) { return grad[j]; }) / T(grad.cols > 0 ? grad.cols : 1);\n"
     "    row.for_each(grad_hidden_states.cols, [&](auto j) { grad_hidden_states.set(j, grad[j] - mean); });\n"
     "    row.for_each(grad_weight.cols, [&](auto j) { grad_weight.set(j, T(0)); });  // the placeholder ignores weight\n",
     "    // dx = s (g w - x s^2 mean(g w x)), dw = g x s for s = 1 / sqrt(mean(x^2) + eps).\n"
     "    const T n = T(hidden_states.cols > 0 ? hidden_states.cols : 1);\n"
     "    const T scale = T(1) / std::sqrt(row.sum(hidden_states.cols, [&](auto j) {\n"
     "      return hidden_states[j] * hidden_states[j]; }) / n + variance_epsilon);\n"
     "    const T dot = row.sum(hidden_states.cols, [&](auto j) { return grad[j] * weight[j] * hidden_states[j]; }) / n;\n"
     "    row.for_each(hidden_states.cols, [&](auto j) {\n"
     "      grad_hidden_states.set(j, scale * (grad[j] * weight[j] - hidden_states[j] * scale * scale * dot));\n"
     "      grad_weight.set(j, grad[j] * hidden_states[j] * scale);\n"
     "    });\n"),
]
DECLARATION = [
    (f'"""{OP}: Say here in a sentence what it computes, row by row.',
     f'"""{OP}: hidden_states * weight / sqrt(mean(hidden_states^2) + variance_epsilon), row by row.'),
    ("    return hidden_states - hidden_states.mean(dim=-1, keepdim=True)\n",
     "    variance = hidden_states.square().mean(dim=-1, keepdim=True)\n"
     "    return hidden_states * (variance + variance_epsilon).rsqrt() * weight\n"),
    ('    out_cols="d",  # the result\'s row length: "d", "d/2" (a gated activation), "2*d"\n',
     '    broadcast=["weight"],  # one vector of d elements every row reads\n'),
    ('    example={"variance_epsilon": 1.5},', '    example={"variance_epsilon": 1e-6},'),
]
LAYERS = f'''"""nn.Module layers over the ops, as kernels-community's rmsnorm package has them."""
import torch

from .ops import {OP}


class RMSNorm(torch.nn.Module):
    """RMS normalization over the last dimension; set `weight` and `variance_epsilon` on it."""

    weight: torch.Tensor
    variance_epsilon: float

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        return {OP}(hidden_states, self.weight, self.variance_epsilon)


__all__ = ["RMSNorm"]
'''


def opgen_commands() -> list[list[str]]:
    return [[OP, "--kind", "rowwise", "--schema", SCHEMA]]


def apply(project: Path) -> dict[str, int]:
    """Edit what `opgen new` wrote into the port; {file: changed lines}. Writes layers.py and the upstream tests."""
    counts = apply_edits(project, {f"csrc/{OP}/{OP}.h": MATH, f"{PACKAGE}/ops/{OP}.py": DECLARATION})
    counts[f"{PACKAGE}/layers.py"] = write_file(project, f"{PACKAGE}/layers.py", LAYERS)
    shutil.copytree(UPSTREAM_TESTS, project / "tests" / "kernels_community_rmsnorm", dirs_exist_ok=True)
    return counts


if __name__ == "__main__":
    dest = Path(sys.argv[1]).resolve()
    render(HERE.parent, dest, opgen_commands(), project_name=PACKAGE)
    counts = apply(dest)
    print(f"ported into {dest}: {counts}")
