"""rgb_to_gray: achieved bandwidth (3 bytes read + 1 written per pixel) against the same integer
formula in eager PyTorch and under torch.compile, and the seed's one-pixel-per-thread kernel.

A 4096 x 4096 image moves 64 MiB, about 25 us at copy speed: close to what one Python call of an
op costs on the host. The `ours_graph` row replays the op from a CUDA graph, so it shows the
kernel's own rate without the Python and dispatcher overhead.

`python -m benchmarks rgb_to_gray` times three images; `--sweep` times SWEEP (square images of 32^2 to
8192^2 pixels, aligned and misaligned, and odd shapes; the op takes uint8 only) and checks TARGETS.
"""

import torch

from opgen_examples.ops.rgb_to_gray import naive, reference, rgb_to_gray

from .limits import LAUNCH_BOUND
from .sweep import Point, tensor
from .targets import beats_eager_and_compile, host_within, near_copy_when_misaligned

SIZE_LABEL = "pixels"
SIDES = (32, 64, 128, 256, 512, 1024, 2048, 4096, 8192)
ODD_SHAPES = ((1, 1), (3, 7), (1080, 1920), (999, 1001), (4321, 7777))
SWEEP = [
    *(Point("uint8 square", s * s, {"shape": (s, s)}, key=s == 8192) for s in SIDES),
    *(Point("uint8 square misaligned", s * s, {"shape": (s, s), "misaligned": True}, key=s == 8192) for s in SIDES),
    *(Point("uint8 odd shapes", h * w, {"shape": (h, w)}) for h, w in ODD_SHAPES),
]
HOST_NATIVE = "torch.bitwise_not"
TARGETS = [
    beats_eager_and_compile(limit=LAUNCH_BOUND),
    near_copy_when_misaligned("uint8 square misaligned"),
    host_within(1.5, HOST_NATIVE),
]


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
        img = tensor((side, side, 3), torch.uint8)
        bench.compare(
            "rgb_to_gray",
            f"{side}x{side}",
            bytes_moved=4 * side * side,
            ours=lambda: rgb_to_gray(img),
            eager=lambda: reference(img),
            seed=lambda: naive(img),
            ours_graph=graph_replay(lambda: rgb_to_gray(img)),
        )
    misaligned = tensor((4096, 4096, 3), torch.uint8, misaligned=True)  # not 16-byte aligned: one pixel at a time
    bench.compare(
        "rgb_to_gray",
        "4096x4096 misaligned",
        bytes_moved=4 * 4096 * 4096,
        ours=lambda: rgb_to_gray(misaligned),
        eager=lambda: reference(misaligned),
        seed=lambda: naive(misaligned),
    )


def measure(bench, size: int, shape: tuple, misaligned: bool = False) -> None:
    img = tensor((*shape, 3), torch.uint8, misaligned)
    bench.compare(
        "rgb_to_gray",
        "x".join(map(str, shape)) + (" misaligned" if misaligned else ""),
        bytes_moved=4 * size,
        ours=lambda: rgb_to_gray(img),
        eager=lambda: reference(img),
    )


def host_calls(numel: int) -> dict:
    img = tensor((numel, 1, 3), torch.uint8)
    return {
        "ours": lambda: rgb_to_gray(img),
        "raw": lambda: torch.ops.examples.rgb_to_gray.default(img),
        "native": lambda: torch.bitwise_not(img),
    }
