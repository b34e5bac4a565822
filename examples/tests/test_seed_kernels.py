"""The seeds' own kernels, kept as benchmark baselines (`<op>_naive`): CUDA only, and right against
the same references as the ops they are baselines for, so a "seed" row in the report is a fair one."""
import importlib

import pytest
import torch

import opgen_testing as testing
from opgen_examples.ops.gemm import gemm_naive
from opgen_examples.ops.vector_add import naive as vector_add_naive

# The op modules (opgen_examples.ops.<op> is the function itself): each has naive() and reference().
fused_linear_gelu, fused_relu_scale, normalize_volume, rgb_to_gray = (
    importlib.import_module(f"opgen_examples.ops.{op}")
    for op in ["fused_linear_gelu", "fused_relu_scale", "normalize_volume", "rgb_to_gray"])

CPU_CALLS = {
    "vector_add_naive": lambda: vector_add_naive(torch.ones(3), torch.ones(3)),
    "gemm_naive": lambda: gemm_naive(torch.ones(2, 3), torch.ones(3, 4)),
    "fused_relu_scale_naive": lambda: fused_relu_scale.naive(torch.randn(5), 1.5),
    "rgb_to_gray_naive": lambda: rgb_to_gray.naive(torch.zeros(2, 3, 3, dtype=torch.uint8)),
    "normalize_volume_naive": lambda: normalize_volume.naive(torch.zeros(2, 3, 4, dtype=torch.uint16), 7.0),
    "fused_linear_gelu_naive": lambda: fused_linear_gelu.naive(torch.randn(2, 3), torch.randn(4, 3), torch.randn(4)),
}


@pytest.mark.parametrize("name", sorted(CPU_CALLS))
def test_has_no_cpu_kernel(name):
    assert hasattr(torch.ops.examples, name)
    assert not torch._C._dispatch_has_kernel_for_dispatch_key(f"examples::{name}", "CPU")


@pytest.mark.parametrize("name", sorted(CPU_CALLS))
def test_cpu_call_names_the_op(name):
    message = f"Could not run 'examples::{name}' with arguments from the 'CPU' backend"
    with pytest.raises(NotImplementedError, match=message):
        CPU_CALLS[name]()


@testing.requires_cuda
@pytest.mark.parametrize("layout", ["contiguous", "misaligned", "strided"])
def test_fused_relu_scale_naive(layout):
    x = testing.make_tensor((70001,), torch.float32, "cuda", layout)
    torch.testing.assert_close(fused_relu_scale.naive(x, 1.5), fused_relu_scale.reference(x, 1.5), rtol=0, atol=0)
    assert fused_relu_scale.naive(x[:0], 1.5).shape == (0,)
    with pytest.raises(RuntimeError, match="x must be Float"):
        fused_relu_scale.naive(x.half(), 1.5)


@testing.requires_cuda
@pytest.mark.parametrize("shape", [(37, 53, 3), (1, 1, 3), (0, 5, 3), (300, 17, 3)])
def test_rgb_to_gray_naive_truncates_float_weights(shape):
    img = testing.make_tensor(shape, torch.uint8, "cuda", low=0, high=255)
    r, g, b = img.float().unbind(-1)
    truncated = (0.299 * r + 0.587 * g + 0.114 * b).to(torch.uint8)  # the seed's formula, no rounding
    diff = (rgb_to_gray.naive(img).int() - truncated.int()).abs()
    assert diff.numel() == 0 or diff.max() <= 1  # float contraction may cross an integer boundary
    with pytest.raises(RuntimeError, match="H x W x 3"):
        rgb_to_gray.naive(img[..., :2])


@testing.requires_cuda
@pytest.mark.parametrize("shape", [(5, 37, 41), (1, 1, 1), (0, 3, 3), (9, 8, 130)])
def test_normalize_volume_naive(shape):
    volume = testing.make_tensor(shape, torch.uint16, "cuda", low=0, high=65535)
    testing.assert_close(normalize_volume.naive(volume, 4095.0), normalize_volume.reference(volume.double(), 4095.0),
                         torch.float32)
    with pytest.raises(RuntimeError, match="volume must have 3 dimension"):
        normalize_volume.naive(volume.flatten(), 4095.0)


@testing.requires_cuda
@pytest.mark.parametrize("batch, in_features, out_features", [(33, 70, 45), (1, 1, 1), (0, 8, 4), (5, 0, 3)])
def test_fused_linear_gelu_naive(batch, in_features, out_features):
    x = testing.make_tensor((batch, in_features), torch.float32, "cuda", low=-1, high=1)
    weight = testing.make_tensor((out_features, in_features), torch.float32, "cuda", low=-1, high=1)
    bias = testing.make_tensor((out_features,), torch.float32, "cuda", low=-1, high=1)
    expected = fused_linear_gelu.reference(x.double(), weight.double(), bias.double())
    torch.testing.assert_close(fused_linear_gelu.naive(x, weight, bias).double(), expected, rtol=1e-4,
                               atol=1e-5 * max(1, in_features))
    with pytest.raises(RuntimeError, match="weight must have 2 dimension"):
        fused_linear_gelu.naive(x, weight.flatten(), bias)
