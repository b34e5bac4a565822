"""A minimal PNG codec, standard library only (zlib + struct), for the example scripts.

Reads and writes 8-bit grayscale and 8-bit RGB images, not interlaced; reading undoes all five
row filters (None, Sub, Up, Average, Paeth) and checks every chunk's CRC. Anything else (16-bit,
palette, alpha, Adam7) is refused with a ValueError. Pure Python: meant for small images.
"""
from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Sequence

SIGNATURE = b"\x89PNG\r\n\x1a\n"
COLOUR_TYPES = {1: 0, 3: 2}  # channels -> PNG colour type: 0 grayscale, 2 RGB
NONE, SUB, UP, AVERAGE, PAETH = range(5)  # row filter types


@dataclass(frozen=True)
class Image:
    width: int
    height: int
    channels: int  # 1 (gray) or 3 (RGB)
    pixels: bytes  # rows top to bottom, channels interleaved: height * width * channels bytes

    def __post_init__(self):
        if self.channels not in COLOUR_TYPES:
            raise ValueError(f"channels must be 1 (gray) or 3 (RGB), got {self.channels}")
        if len(self.pixels) != self.height * self.width * self.channels:
            shape = f"{self.width}x{self.height}x{self.channels}"
            raise ValueError(f"{len(self.pixels)} bytes of pixels for a {shape} image")


def read(path: str | Path) -> Image:
    return decode(Path(path).read_bytes())


def write(path: str | Path, image: Image, filters: Sequence[int] | None = None) -> None:
    Path(path).write_bytes(encode(image, filters))


def chunks(data: bytes) -> Iterator[tuple[bytes, bytes]]:
    """(type, body) of each chunk of a PNG file, CRCs checked, up to and including IEND."""
    if not data.startswith(SIGNATURE):
        raise ValueError("not a PNG file (bad signature)")
    pos = len(SIGNATURE)
    while pos + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        if pos + 12 + length > len(data):
            break
        body = data[pos + 8:pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])
        if zlib.crc32(kind + body) != crc:
            raise ValueError(f"corrupt PNG: bad CRC in the {kind.decode('latin-1')} chunk at byte {pos}")
        yield kind, body
        if kind == b"IEND":
            return
        pos += 12 + length
    raise ValueError("truncated PNG: no IEND chunk")


def decode(data: bytes) -> Image:
    header, idat = None, []
    for kind, body in chunks(data):
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        elif kind != b"IEND" and kind[0] < ord("a") and kind != b"PLTE":  # unknown critical chunk
            raise ValueError(f"unsupported PNG: critical chunk {kind.decode('latin-1')}")
    if header is None:
        raise ValueError("corrupt PNG: no IHDR chunk")
    width, height, depth, colour_type, compression, filter_method, interlace = header
    channels = {v: k for k, v in COLOUR_TYPES.items()}.get(colour_type)
    if depth != 8 or channels is None or compression != 0 or filter_method != 0 or interlace != 0:
        raise ValueError(f"unsupported PNG: bit depth {depth}, colour type {colour_type}, interlace {interlace} "
                         "(only 8-bit grayscale or RGB, not interlaced)")
    raw = zlib.decompress(b"".join(idat))
    stride = width * channels
    if len(raw) != height * (stride + 1):
        raise ValueError(f"corrupt PNG: {len(raw)} bytes of image data for {width}x{height}x{channels}")
    pixels = bytearray()
    previous = bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        row = _unfilter(raw[start], bytearray(raw[start + 1:start + 1 + stride]), previous, channels)
        pixels += row
        previous = row
    return Image(width, height, channels, bytes(pixels))


def encode(image: Image, filters: Sequence[int] | None = None) -> bytes:
    """PNG bytes of `image`. Row y uses filters[y % len(filters)]; None picks per row the filter with
    the smallest sum of |signed residuals| (the usual heuristic)."""
    stride = image.width * image.channels
    raw = bytearray()
    previous = bytes(stride)
    for y in range(image.height):
        row = image.pixels[y * stride:(y + 1) * stride]
        if filters is None:
            candidates = [(f, _filter(f, row, previous, image.channels)) for f in range(5)]
            kind, filtered = min(candidates, key=lambda c: sum(b if b < 128 else 256 - b for b in c[1]))
        else:
            kind = filters[y % len(filters)]
            filtered = _filter(kind, row, previous, image.channels)
        raw.append(kind)
        raw += filtered
        previous = row
    ihdr = struct.pack(">IIBBBBB", image.width, image.height, 8, COLOUR_TYPES[image.channels], 0, 0, 0)
    idat = zlib.compress(bytes(raw), 9)
    return SIGNATURE + make_chunk(b"IHDR", ihdr) + make_chunk(b"IDAT", idat) + make_chunk(b"IEND", b"")


def make_chunk(kind: bytes, body: bytes) -> bytes:
    """One chunk: length, type, body, CRC."""
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def _paeth(left: int, up: int, up_left: int) -> int:
    estimate = left + up - up_left
    d_left, d_up, d_up_left = abs(estimate - left), abs(estimate - up), abs(estimate - up_left)
    if d_left <= d_up and d_left <= d_up_left:
        return left
    return up if d_up <= d_up_left else up_left


def _predict(kind: int, left: int, up: int, up_left: int) -> int:
    if kind == NONE:
        return 0
    if kind == SUB:
        return left
    if kind == UP:
        return up
    if kind == AVERAGE:
        return (left + up) // 2
    if kind == PAETH:
        return _paeth(left, up, up_left)
    raise ValueError(f"corrupt PNG: unknown row filter type {kind}")


def _unfilter(kind: int, row: bytearray, previous: bytes, bpp: int) -> bytearray:
    """Undo one row's filter in place; `previous` is the row above, already unfiltered."""
    if kind == NONE:
        return row
    if kind == UP:
        return bytearray((a + b) & 255 for a, b in zip(row, previous))
    for i in range(len(row)):
        left = row[i - bpp] if i >= bpp else 0
        up_left = previous[i - bpp] if i >= bpp else 0
        row[i] = (row[i] + _predict(kind, left, previous[i], up_left)) & 255
    return row


def _filter(kind: int, row: bytes, previous: bytes, bpp: int) -> bytes:
    out = bytearray(len(row))
    for i in range(len(row)):
        left = row[i - bpp] if i >= bpp else 0
        up_left = previous[i - bpp] if i >= bpp else 0
        out[i] = (row[i] - _predict(kind, left, previous[i], up_left)) & 255
    return bytes(out)
