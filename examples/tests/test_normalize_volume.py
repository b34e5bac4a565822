"""normalize_volume: what is special to this op (other max_values, the full uint16 range, equality
with eager PyTorch, its argument checks, > 2**31 voxels). The standard checks (the reference on
every layout and shape in SPEC, opcheck, torch.compile, streams, devices, threads) run from its SPEC
(opgen_examples/ops/normalize_volume.py) in test_opgen_conformance.py.
"""
import opgen_testing as testing
import pytest
import torch

from opgen_examples.ops.normalize_volume import SPEC, normalize_volume, reference

MAX_VALUE = SPEC.args["max_value"]  # 4095, the seed's: 12-bit CT data


def make_volume(shape, device, layout="contiguous", high=65535):
    return testing.make_tensor(shape, torch.uint16, device, layout, low=0, high=high)


def expected(volume, max_value):
    return volume.double() / max_value


@pytest.mark.parametrize("device", testing.DEVICES)
@pytest.mark.parametrize("layout", testing.LAYOUTS)
def test_result_is_contiguous(layout, device):
    volume = make_volume((3, 5, 1027), device, layout)
    assert normalize_volume(volume, MAX_VALUE).is_contiguous()


@pytest.mark.parametrize("device", testing.DEVICES)
@pytest.mark.parametrize("max_value", [65535.0, 1.0, 0.3, 1e30, float("inf")])
def test_max_values(max_value, device):
    volume = make_volume((3, 5, 1027), device)
    testing.assert_close(normalize_volume(volume, max_value), expected(volume, max_value), torch.float32)


@pytest.mark.parametrize("device", testing.DEVICES)
def test_full_range_maps_to_unit_interval(device):
    volume = torch.arange(65536, dtype=torch.int64, device=device).to(torch.uint16).view(16, 64, 64)
    out = normalize_volume(volume, 65535)
    assert out[0, 0, 0] == 0 and out[-1, -1, -1] == 1
    testing.assert_close(out, expected(volume, 65535), torch.float32)


@pytest.mark.parametrize("device", testing.DEVICES)
@pytest.mark.parametrize("shape", [(1, 1, 1), (1, 1, 3), (1, 2, 7), (3, 5, 1027), (4, 64, 129)])
def test_every_misalignment(shape, device):
    # On CUDA a volume that starts mid-vector (any of the 8 voxel offsets in 16 bytes) is read with
    # aligned loads shifted into place; volumes shorter than a vector are all head and tail.
    volume = make_volume(shape, device)
    for offset in range(8):
        shifted = testing.at_offset(volume, offset)
        assert shifted.data_ptr() % 16 == 2 * offset
        testing.assert_close(normalize_volume(shifted, MAX_VALUE), expected(volume, MAX_VALUE), torch.float32)


@pytest.mark.parametrize("device", testing.DEVICES)
def test_matches_eager_pytorch(device):
    volume = make_volume((7, 9, 11), device, high=MAX_VALUE)
    torch.testing.assert_close(normalize_volume(volume, MAX_VALUE), reference(volume, MAX_VALUE))


@pytest.mark.parametrize("device", testing.DEVICES)
def test_rejects_bad_input(device):
    volume = make_volume((2, 3, 4), device)
    with pytest.raises(RuntimeError, match="volume must be UInt16, got Float"):
        normalize_volume(volume.float(), MAX_VALUE)
    with pytest.raises(RuntimeError, match="volume must be UInt16, got Short"):
        normalize_volume(volume.to(torch.int16), MAX_VALUE)
    with pytest.raises(RuntimeError, match=r"volume must have 3 dimension\(s\), got shape \[6, 4\]"):
        normalize_volume(volume.view(6, 4), MAX_VALUE)
    with pytest.raises(RuntimeError, match=r"volume must have 3 dimension\(s\), got shape \[1, 2, 3, 4\]"):
        normalize_volume(volume.view(1, 2, 3, 4), MAX_VALUE)
    for bad in (0.0, -1.0, float("nan"), 1e-50):
        with pytest.raises(RuntimeError, match="max_value must be positive"):
            normalize_volume(volume, bad)


@testing.requires_cuda_memory(24)
def test_more_than_2_to_the_31_voxels():
    n = 2**31 + 77
    words = torch.randint(-(2**31), 2**31 - 1, ((n + 1) // 2,), dtype=torch.int32, device="cuda")
    volume = words.view(torch.uint16)[:n].view(1, 1, n)  # random uint16 without an int64 copy
    out = normalize_volume(volume, MAX_VALUE)
    for part in (slice(0, 4096), slice(2**31 - 4096, 2**31 + 4096), slice(n - 4096, n)):
        testing.assert_close(out[..., part], expected(volume[..., part], MAX_VALUE), torch.float32)
