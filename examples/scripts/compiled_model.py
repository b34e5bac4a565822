"""A small model built from the example ops, under torch.compile(fullgraph=True), forward and backward,
against the same model built from plain PyTorch ops in eager mode.

The example ops reach torch.compile as opaque custom ops: their fake (meta) kernels give Inductor the
output shapes, their registered autograd formulas the backward, so the whole model is one graph.

    cd examples && python scripts/compiled_model.py    # needs the installed _C (or OPGEN_JIT=1)
"""
from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

import torch
import torch.nn.functional as F

sys.path.append(str(Path(__file__).resolve().parent.parent))  # only if the package is not installed

import opgen_examples  # noqa: E402

# The ops the model calls, once from opgen_examples and once as the plain PyTorch they stand for.
EXAMPLE_OPS = SimpleNamespace(
    gemm=opgen_examples.gemm,
    fused_bias_gelu=opgen_examples.fused_bias_gelu,
    fused_relu_scale=opgen_examples.fused_relu_scale,
    gelu_approx=opgen_examples.gelu_approx,
    scale=opgen_examples.scale,
    vector_add=opgen_examples.vector_add,
)
TORCH_OPS = SimpleNamespace(
    gemm=torch.matmul,
    fused_bias_gelu=lambda x, bias: F.gelu(x + bias, approximate="tanh"),
    fused_relu_scale=lambda x, alpha: torch.relu(x) * alpha,
    gelu_approx=lambda x: F.gelu(x, approximate="tanh"),
    scale=lambda x, factor=2.0: x * factor,
    vector_add=torch.add,
)


class ResidualMLP(torch.nn.Module):
    """y = 2 * (relu(gelu(x @ w1 + b1)) * 0.5) @ w2 + gelu(x): six ops, every one differentiable."""

    def __init__(self, ops: SimpleNamespace, features: int = 64, hidden: int = 96):
        super().__init__()
        self.ops = ops
        self.w1 = torch.nn.Parameter(torch.randn(features, hidden) / features**0.5)
        self.b1 = torch.nn.Parameter(torch.randn(hidden) / 10)
        self.w2 = torch.nn.Parameter(torch.randn(hidden, features) / hidden**0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        ops = self.ops
        h = ops.fused_bias_gelu(ops.gemm(x, self.w1), self.b1)
        h = ops.fused_relu_scale(h, 0.5)
        return ops.vector_add(ops.scale(ops.gemm(h, self.w2), 2.0), ops.gelu_approx(x))


def check(device: str) -> None:
    ours = ResidualMLP(EXAMPLE_OPS).to(device)
    plain = ResidualMLP(TORCH_OPS).to(device)
    plain.load_state_dict(ours.state_dict())
    compiled = torch.compile(ours, fullgraph=True)  # fails on any graph break

    x = torch.randn(37, 64, device=device, requires_grad=True)
    x_plain = x.detach().clone().requires_grad_()
    grad = torch.randn(37, 64, device=device)
    y, y_plain = compiled(x), plain(x_plain)
    torch.testing.assert_close(y, y_plain, rtol=1e-4, atol=1e-4)
    y.backward(grad)
    y_plain.backward(grad)
    torch.testing.assert_close(x.grad, x_plain.grad, rtol=1e-4, atol=1e-4)
    for (name, p), p_plain in zip(ours.named_parameters(), plain.parameters()):
        torch.testing.assert_close(p.grad, p_plain.grad, rtol=1e-4, atol=1e-4, msg=lambda m: f"{name}.grad: {m}")


def main() -> None:
    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    for device in devices:
        torch._dynamo.reset()
        check(device)
    print(f"OK compiled_model: torch.compile(fullgraph=True) of a model of gemm, fused_bias_gelu, fused_relu_scale, "
          f"scale, vector_add, gelu_approx matches eager PyTorch, forward and backward, on {', '.join(devices)}")


if __name__ == "__main__":
    main()
