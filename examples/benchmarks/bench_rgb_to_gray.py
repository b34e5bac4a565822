"""rgb_to_gray: achieved bandwidth (3 bytes read + 1 written per pixel) against the same integer
formula in eager PyTorch and under torch.compile, and the seed's one-pixel-per-thread kernel.

A 4096 x 4096 image moves 64 MiB, about 25 us at copy speed: close to what one Python call of an
op costs on the host. The `ours_graph` row replays the op from a CUDA graph, so it shows the
kernel's own rate without the Python and dispatcher overhead.
"""
import torch

from opgen_examples.ops.rgb_to_gray import naive, reference, rgb_to_gray


def graph_replay(fn):
    """fn captured in a CUDA graph; the returned callable replays it."""
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        fn()  # first call outside the capture: allocator warm-up
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        fn()
    return graph.replay


def run(bench) -> None:
    for side in (4096, 8192):  # 64 MiB and 256 MiB moved: larger than L2
        img = torch.randint(0, 256, (side, side, 3), dtype=torch.uint8, device="cuda")
        bench.compare("rgb_to_gray", f"{side}x{side}", bytes_moved=4 * side * side,
                      ours=lambda: rgb_to_gray(img), eager=lambda: reference(img), seed=lambda: naive(img),
                      ours_graph=graph_replay(lambda: rgb_to_gray(img)))
    flat = torch.randint(0, 256, (4096 * 4096 * 3 + 1,), dtype=torch.uint8, device="cuda")
    misaligned = flat[1:].view(4096, 4096, 3)  # not 16-byte aligned: one pixel at a time
    bench.compare("rgb_to_gray", "4096x4096 misaligned", bytes_moved=4 * 4096 * 4096,
                  ours=lambda: rgb_to_gray(misaligned), eager=lambda: reference(misaligned),
                  seed=lambda: naive(misaligned))
