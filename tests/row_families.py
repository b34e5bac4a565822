"""The op families the row-wise kind is for, each written as its math alone: LayerNorm (weight and
bias broadcast, forward and backward), softmax, log-softmax and a rotary pair rotation (half-split, as
transformers' rotate_half; a trailing odd element passes through). `opgen new --kind rowwise` for each,
then its functors and reference replace the placeholder.

    python tests/row_families.py DEST    writes the project into DEST (for a GPU machine)
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

from ports import render

HERE = Path(__file__).resolve().parent
PACKAGE = "my_ops"

# name -> (schema, what it computes (its module's summary), Forward and Backward functors, reference body,
# declaration lines)
FAMILIES = {
    "layer_norm": (
        "(Tensor x, Tensor weight, Tensor bias, float eps=1e-5) -> Tensor",
        "(x - mean) / sqrt(var + eps) * weight + bias over each row.",
        """// y = (x - mean) / sqrt(var + eps) * weight + bias over the row.
template <typename T>
struct Forward {
  T eps;

  template <typename Row, typename In, typename Out>
  OPGEN_HOST_DEVICE void operator()(const Row& row, const In& x, const In& weight, const In& bias, const Out& y) const {
    const auto stats = row.mean_var(x.cols, [&](auto j) { return x[j]; });
    const T mean = stats.mean, rstd = T(1) / std::sqrt(stats.var + eps);
    row.for_each(y.cols, [&](auto j) { y.set(j, (x[j] - mean) * rstd * weight[j] + bias[j]); });
  }
};

// dx = rstd (g w - mean(g w) - xhat mean(g w xhat)), dw = g xhat, db = g (summed over rows for you).
template <typename T>
struct Backward {
  T eps;

  template <typename Row, typename In, typename Out>
  OPGEN_HOST_DEVICE void operator()(const Row& row, const In& grad, const In& x, const In& weight, const In& bias,
                                    const Out& grad_x, const Out& grad_weight, const Out& grad_bias) const {
    const T n = T(x.cols > 0 ? x.cols : 1);
    const auto stats = row.mean_var(x.cols, [&](auto j) { return x[j]; });
    const T mean = stats.mean, rstd = T(1) / std::sqrt(stats.var + eps);
    const T mean_g = row.sum(x.cols, [&](auto j) { return grad[j] * weight[j]; }) / n;
    const T mean_gx = row.sum(x.cols, [&](auto j) { return grad[j] * weight[j] * (x[j] - mean) * rstd; }) / n;
    row.for_each(x.cols, [&](auto j) {
      const T xhat = (x[j] - mean) * rstd;
      grad_x.set(j, rstd * (grad[j] * weight[j] - mean_g - xhat * mean_gx));
      grad_weight.set(j, grad[j] * xhat);
      grad_bias.set(j, grad[j]);
    });
  }
};
""",
        "    return torch.nn.functional.layer_norm(x, (x.shape[-1],), weight, bias, eps)\n",
        '    broadcast=["weight", "bias"],  # vectors of d elements every row reads\n'
        "    # The mean and variance are sums of d terms in float (their error grows with d, to ~1e-5 at\n"
        "    # d = 70001), and w * xhat + b cancels where the two meet: absolute error, not relative.\n"
        "    tolerances={torch.float32: (1e-5, 4e-5)},\n",
    ),
    "softmax": (
        "(Tensor x) -> Tensor",
        "exp(x - max) / sum(exp(x - max)) over each row.",
        """// y = exp(x - max) / sum(exp(x - max)) over the row: row.softmax's p[j] (on CUDA, one exp an
// element where the row is held in registers).
template <typename T>
struct Forward {
  template <typename Row, typename In, typename Out>
  OPGEN_HOST_DEVICE void operator()(const Row& row, const In& x, const Out& y) const {
    const auto p = row.softmax(x.cols, [&](auto j) { return x[j]; });
    row.for_each(y.cols, [&](auto j) { y.set(j, p[j]); });
  }
};

// dx = y (g - sum(g y)), y recomputed from x.
template <typename T>
struct Backward {
  template <typename Row, typename In, typename Out>
  OPGEN_HOST_DEVICE void operator()(const Row& row, const In& grad, const In& x, const Out& grad_x) const {
    const auto p = row.softmax(x.cols, [&](auto j) { return x[j]; });
    const T dot = row.sum(x.cols, [&](auto j) { return grad[j] * p[j]; });
    row.for_each(x.cols, [&](auto j) { grad_x.set(j, p[j] * (grad[j] - dot)); });
  }
};
""",
        "    return torch.softmax(x, dim=-1)\n",
        "",
    ),
    "log_softmax": (
        "(Tensor x) -> Tensor",
        "x - max - log(sum(exp(x - max))) over each row.",
        """// y = x - max - log(sum(exp(x - max))) over the row, x - max first: it is exact, where max + log(sum)
// rounded at large logits (1e4 in float32) would cost the result an ulp of 1e4.
template <typename T>
struct Forward {
  template <typename Row, typename In, typename Out>
  OPGEN_HOST_DEVICE void operator()(const Row& row, const In& x, const Out& y) const {
    const auto terms = row.exp_sum(x.cols, [&](auto j) { return x[j]; });
    const T log_sum = std::log(terms.sum);
    row.for_each(y.cols, [&](auto j) { y.set(j, x[j] - terms.max - log_sum); });
  }
};

// dx = g - exp(y) sum(g).
template <typename T>
struct Backward {
  template <typename Row, typename In, typename Out>
  OPGEN_HOST_DEVICE void operator()(const Row& row, const In& grad, const In& x, const Out& grad_x) const {
    const auto terms = row.exp_sum(x.cols, [&](auto j) { return x[j]; });
    const T log_sum = std::log(terms.sum);
    const T total = row.sum(x.cols, [&](auto j) { return grad[j]; });
    row.for_each(x.cols, [&](auto j) { grad_x.set(j, grad[j] - std::exp(x[j] - terms.max - log_sum) * total); });
  }
};
""",
        "    return torch.log_softmax(x, dim=-1)\n",
        "    # dx = g - exp(y) sum(g) cancels where the two terms meet: an absolute error of a few ulps of |g|\n"
        "    # (1.35e-6 seen in float32, where the default allows 1e-6 + 2e-5 |dx|).\n"
        "    tolerances={torch.float32: (2e-5, 1e-5)},\n",
    ),
    "rotary": (
        "(Tensor x, Tensor cos, Tensor sin) -> Tensor",
        "x cos + rotate_half(x) sin on each row's first 2h elements (h = d / 2).",
        """// y = x cos + rotate_half(x) sin on the row's first 2h elements (h = d / 2), where rotate_half(x)
// is (-x[h:2h], x[:h]); an odd last element passes through.
template <typename T>
struct Forward {
  template <typename Row, typename In, typename Out>
  OPGEN_HOST_DEVICE void operator()(const Row& row, const In& x, const In& cos, const In& sin, const Out& y) const {
    const int64_t h = x.cols / 2;
    row.for_each(y.cols, [&](auto j) {
      if (j >= 2 * h) {
        y.set(j, x[j]);
        return;
      }
      const T rotated = j < h ? -x[j + h] : x[j - h];
      y.set(j, x[j] * cos[j] + rotated * sin[j]);
    });
  }
};

// dx = g cos + rotate_half's transpose of (g sin): (g sin)[h:2h] for the first half, -(g sin)[:h] for the second.
template <typename T>
struct Backward {
  template <typename Row, typename In, typename Out>
  OPGEN_HOST_DEVICE void operator()(const Row& row, const In& grad, const In& x, const In& cos, const In& sin,
                                    const Out& grad_x) const {
    const int64_t h = x.cols / 2;
    row.for_each(x.cols, [&](auto j) {
      if (j >= 2 * h) {
        grad_x.set(j, grad[j]);
        return;
      }
      const T back = j < h ? grad[j + h] * sin[j + h] : -grad[j - h] * sin[j - h];
      grad_x.set(j, grad[j] * cos[j] + back);
    });
  }
};
""",
        "    h = x.shape[-1] // 2\n"
        "    rotated = torch.cat([-x[..., h:2 * h], x[..., :h]], dim=-1)\n"
        "    paired = x[..., :2 * h] * cos[..., :2 * h] + rotated * sin[..., :2 * h]\n"
        "    return torch.cat([paired, x[..., 2 * h:]], dim=-1)\n",
        '    differentiable=["x"],  # positions (cos, sin) take no gradient\n',
    ),
}


# A user-owned test beside the conformance suite: the softmax family at the values attention brings
# (masked entries at -inf, whole rows of them, large logits), on every device here. row.exp_sum's
# and row.softmax's per-thread parts meet -inf where a thread's elements are all masked.
EDGE_TEST = """import pytest
import torch

import my_ops

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("cols", [7, 1000, 4096, 40000])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_softmax_family_at_masked_and_large_logits(device, cols, dtype):
    x = torch.randn(6, cols, device=device) * 30
    x[0, : cols // 2] = -torch.inf  # a causal mask's half row
    x[1, ::3] = -torch.inf
    x[2] = -torch.inf  # every entry masked: NaN, as torch
    x[3] += 1e4  # large logits
    x[4, -1] = 1e4  # one dominant entry
    x = x.to(dtype)
    for op, expected in ((my_ops.softmax, torch.softmax), (my_ops.log_softmax, torch.log_softmax)):
        torch.testing.assert_close(op(x).double(), expected(x.double(), dim=-1), equal_nan=True,
                                   rtol=2e-2 if dtype == torch.bfloat16 else 1e-5, atol=1e-5)
"""


# A user-owned test of LayerNorm's rows far from zero: row.mean_var takes one reduction where a row's
# mean is small beside its spread and a second pass where it is not (500 standard deviations off,
# the one reduction's sum of squares alone would lose every digit: errors of 0.3). Held to 4x torch's
# own error in that dtype, plus what the mean's float32 rounding may cost: 16 float32 spacings at the
# offset, over the spread, times the largest weight (4e-3 at 500 standard deviations off). (Measured
# on an H200, float32, 150 draws a case: errors up to 4.3e-4 there, against torch's 4e-5 (its Welford
# mean rounds less); held to 4x torch's alone, 15 draws in 150 failed at rows of 40000, 3 at rows of 7.)
OFFSET_TEST = """import pytest
import torch

import my_ops

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("cols", [7, 1000, 4096, 40000])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("offset", [0.0, 1.0, 8.0, 1000.0])
def test_layer_norm_rows_off_zero(device, cols, dtype, offset):
    spread = 2.0
    x = (torch.randn(5, cols, device=device) * spread + offset).to(dtype)
    weight, bias = torch.randn(cols, device=device).to(dtype), torch.randn(cols, device=device).to(dtype)
    expected = torch.nn.functional.layer_norm(x.double(), (cols,), weight.double(), bias.double(), 1e-5)
    torchs = (torch.nn.functional.layer_norm(x, (cols,), weight, bias, 1e-5).double() - expected).abs().max()
    ours = (my_ops.layer_norm(x, weight, bias, 1e-5).double() - expected).abs().max()
    # (the mean comes from float32 sums in every dtype: a few spacings at the offset, over the spread)
    mean_rounding = 16 * torch.finfo(torch.float32).eps * offset / spread * weight.double().abs().max()
    assert ours <= 4 * torchs + mean_rounding + 1e-5, f"error {ours:.3g} against torch's {torchs:.3g}"
"""


def opgen_commands() -> list[list[str]]:
    return [[name, "--kind", "rowwise", "--schema", schema] for name, (schema, *_) in FAMILIES.items()]


def apply(project: Path) -> None:
    """Replace each op's placeholder functors, reference, row-length line and summary by the family's."""
    for name, (_, summary, functors, reference, declaration) in FAMILIES.items():
        header = project / "csrc" / name / f"{name}.h"
        text, found = re.subn(r"// Placeholder math.*?\n(?=}  // namespace)", lambda _: functors + "\n", header.read_text(),
                              flags=re.S)
        assert found == 1, f"{header}: no placeholder functors"
        header.write_text(text)
        module = project / PACKAGE / "ops" / f"{name}.py"
        text, found = re.subn(r'(    """.*? in plain PyTorch.*?"""\n).*?\n\n', lambda m: m.group(1) + reference + "\n",
                              module.read_text(), count=1, flags=re.S)
        assert found == 1, f"{module}: no placeholder reference"
        text = text.replace("from torch import Tensor\n", "import torch\nfrom torch import Tensor\n")
        text = re.sub(r'    out_cols="d",.*\n', lambda _: declaration, text)
        placeholder = f'"""{name}: Say here in a sentence what it computes, row by row.'
        assert placeholder in text, f"{module}: no placeholder summary"
        module.write_text(text.replace(placeholder, f'"""{name}: {summary}'))
    (project / "tests" / "test_softmax_edges.py").write_text(EDGE_TEST)
    (project / "tests" / "test_layer_norm_offsets.py").write_text(OFFSET_TEST)


if __name__ == "__main__":
    dest = Path(sys.argv[1]).resolve()
    render(HERE.parent, dest, opgen_commands())
    apply(dest)
    print(f"wrote {dest}: {', '.join(FAMILIES)}")
