"""Property tests: every example op against its PyTorch reference on shapes, dtypes and memory
layouts drawn by hypothesis (empty, 1, primes, sizes that end in a partial vector or tile; strided,
transposed and storage-offset views), on every device present
(a pytest parameter, so `-k cuda` selects the GPU runs)."""
import math

import pytest
import torch

import opgen_testing as testing
from opgen_examples.ops import (bitonic_sort, custom_add, fused_bias_gelu, fused_linear_gelu, fused_relu_scale,
                                gelu_approx, gemm, normalize_volume, rgb_to_gray, scale, vector_add)
from opgen_examples.ops.gelu_approx import reference as gelu_reference
from opgen_examples.ops.rgb_to_gray import reference as gray_reference

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

SIZES = [0, 1, 2, 3, 5, 7, 13, 31, 127, 257, 1031]
PROPERTY = settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])

float_dtypes = st.sampled_from(testing.FLOAT_DTYPES)
layouts = st.sampled_from(testing.LAYOUTS)
sizes = st.sampled_from(SIZES)
shapes = st.lists(sizes, min_size=1, max_size=3).map(tuple).filter(lambda s: math.prod(s) <= 200_000)
scalars = st.floats(min_value=-8, max_value=8, allow_nan=False, allow_infinity=False)


def make(shape, dtype, device, layout="contiguous", **kwargs):
    return testing.make_tensor(shape, dtype, device, layout, **kwargs)


@pytest.mark.parametrize("device", testing.DEVICES)
@PROPERTY
@given(shape=shapes, dtype=float_dtypes, layout=layouts)
def test_gelu_approx(shape, dtype, layout, device):
    x = make(shape, dtype, device, layout)
    testing.assert_close(gelu_approx(x), gelu_reference(x.double()), dtype)


@pytest.mark.parametrize("device", testing.DEVICES)
@PROPERTY
@given(shape=shapes, dtype=float_dtypes, layout=layouts, factor=scalars)
def test_scale(shape, dtype, layout, device, factor):
    x = make(shape, dtype, device, layout)
    testing.assert_close(scale(x, factor), x.double() * factor, dtype)


@pytest.mark.parametrize("device", testing.DEVICES)
@PROPERTY
@given(shape=shapes, dtype=float_dtypes, layout=layouts, alpha=scalars)
def test_fused_relu_scale(shape, dtype, layout, device, alpha):
    x = make(shape, dtype, device, layout)
    testing.assert_close(fused_relu_scale(x, alpha), torch.relu(x.double()) * alpha, dtype)


@pytest.mark.parametrize("device", testing.DEVICES)
@PROPERTY
@given(shape=shapes, dtype=float_dtypes, layouts=st.tuples(layouts, layouts))
def test_vector_add_and_custom_add(shape, dtype, layouts, device):
    a, b = make(shape, dtype, device, layouts[0]), make(shape, dtype, device, layouts[1])
    expected = a.double() + b.double()
    testing.assert_close(vector_add(a, b), expected, dtype)
    if device == "cpu":
        testing.assert_close(custom_add(a, b), expected, dtype)


@pytest.mark.parametrize("device", testing.DEVICES)
@PROPERTY
@given(shape=shapes, dtype=float_dtypes, layout=layouts)
def test_fused_bias_gelu(shape, dtype, layout, device):
    x = make(shape, dtype, device, layout)
    bias = make(shape[-1:], dtype, device)
    expected = torch.nn.functional.gelu(x.double() + bias.double(), approximate="tanh")
    testing.assert_close(fused_bias_gelu(x, bias), expected, dtype)


@pytest.mark.parametrize("device", testing.DEVICES)
@PROPERTY
@given(m=sizes, k=sizes, n=sizes, dtype=st.sampled_from([torch.float32, torch.float64]),
       transposed=st.booleans())
def test_gemm_and_fused_linear_gelu(m, k, n, dtype, device, transposed):
    a = make((m, k), dtype, device, low=-1, high=1)
    b = make((n, k), dtype, device, low=-1, high=1).t() if transposed else make((k, n), dtype, device, low=-1, high=1)
    expected = a.double() @ b.double()
    tolerance = {"rtol": 1e-4, "atol": 1e-5 * max(1, k)} if dtype == torch.float32 else {"rtol": 1e-9, "atol": 1e-9}
    torch.testing.assert_close(gemm(a, b).double(), expected, **tolerance)
    bias = make((n,), dtype, device, low=-1, high=1)
    linear = fused_linear_gelu(a, b.t(), bias).double()
    torch.testing.assert_close(linear, torch.nn.functional.gelu(expected + bias.double(), approximate="tanh"),
                               **tolerance)


@pytest.mark.parametrize("device", testing.DEVICES)
@PROPERTY
@given(shape=shapes, dtype=st.sampled_from(testing.FLOAT_DTYPES + [torch.int32, torch.int64]), layout=layouts,
       descending=st.booleans())
def test_bitonic_sort_equals_stable_torch_sort(shape, dtype, layout, device, descending):
    # Few distinct values, so ties (and their order) are exercised.
    x = make(shape, dtype, device, layout, low=-3, high=3)
    if dtype.is_floating_point:
        x = x.round()
    values, indices = bitonic_sort(x, descending)
    expected_values, expected_indices = torch.sort(x, dim=-1, descending=descending, stable=True)
    assert torch.equal(values, expected_values) and torch.equal(indices, expected_indices)


@pytest.mark.parametrize("device", testing.DEVICES)
@PROPERTY
@given(h=sizes, w=sizes, layout=layouts)
def test_rgb_to_gray_is_bit_exact(h, w, layout, device):
    img = make((h, w, 3), torch.uint8, device, layout, low=0, high=255)
    assert torch.equal(rgb_to_gray(img), gray_reference(img))


@pytest.mark.parametrize("device", testing.DEVICES)
@PROPERTY
@given(shape=st.tuples(sizes, sizes, sizes).filter(lambda s: math.prod(s) <= 200_000), layout=layouts,
       max_value=st.floats(min_value=1, max_value=65535))
def test_normalize_volume(shape, layout, device, max_value):
    volume = make(shape, torch.uint16, device, layout, low=0, high=65535)
    expected = volume.to(torch.int64).double() / max_value
    testing.assert_close(normalize_volume(volume, max_value), expected, torch.float32)
