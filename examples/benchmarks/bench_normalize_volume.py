"""normalize_volume: achieved bandwidth (2 bytes read + 4 written per voxel) against eager
volume.float() / max_value (two passes), torch.compile and the seed's 3-D-grid kernel."""
import torch

from opgen_examples.ops.normalize_volume import naive, normalize_volume, reference

MAX_VALUE = 4095.0  # the seed's


def run(bench) -> None:
    volume = torch.randint(0, 4096, (512, 512, 512), dtype=torch.int32, device="cuda").to(torch.uint16)
    bytes_moved = volume.numel() * (2 + 4)  # 768 MiB: far larger than L2
    bench.compare("normalize_volume", "512^3 uint16", bytes_moved=bytes_moved,
                  ours=lambda: normalize_volume(volume, MAX_VALUE), eager=lambda: reference(volume, MAX_VALUE),
                  seed=lambda: naive(volume, MAX_VALUE))
    flat = torch.randint(0, 4096, (volume.numel() + 1,), dtype=torch.int32, device="cuda").to(torch.uint16)
    misaligned = flat[1:].view(volume.shape)  # not 8-byte aligned: one voxel at a time
    bench.compare("normalize_volume", "512^3 uint16 misaligned", bytes_moved=bytes_moved,
                  ours=lambda: normalize_volume(misaligned, MAX_VALUE), eager=lambda: reference(misaligned, MAX_VALUE),
                  seed=lambda: naive(misaligned, MAX_VALUE))
