"""A small PNG reader for tests: enough to look at what a browser really drew.

Reads 8-bit RGB and RGBA, non-interlaced images (what Chromium writes), undoing the five
scanline filters of the PNG specification.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass
from pathlib import Path

_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_CHANNELS = {2: 3, 6: 4}


@dataclass(frozen=True)
class Image:
    width: int
    height: int
    channels: int
    rows: list[bytes]  # unfiltered scanlines, `width * channels` bytes each

    def pixel(self, x: int, y: int) -> tuple[int, ...]:
        start = x * self.channels
        return tuple(self.rows[y][start : start + self.channels][:3])

    def colours(self) -> set[tuple[int, ...]]:
        return {self.pixel(x, y) for y in range(self.height) for x in range(self.width)}


def _paeth(a: int, b: int, c: int) -> int:
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def read_png(path: Path) -> Image:
    data = path.read_bytes()
    assert data.startswith(_SIGNATURE), f"{path} is not a PNG"
    offset, header, compressed = 8, b"", b""
    while offset < len(data):
        (length,) = struct.unpack(">I", data[offset : offset + 4])
        kind = data[offset + 4 : offset + 8]
        body = data[offset + 8 : offset + 8 + length]
        offset += 12 + length
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            compressed += body
        elif kind == b"IEND":
            break
    width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", header)
    assert depth == 8 and colour in _CHANNELS and interlace == 0, (depth, colour, interlace)
    channels = _CHANNELS[colour]
    stride = width * channels
    raw = zlib.decompress(compressed)
    rows: list[bytes] = []
    previous = bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1 : start + 1 + stride])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up = previous[i]
            upper_left = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif kind == 4:
                line[i] = (line[i] + _paeth(left, up, upper_left)) & 0xFF
        rows.append(bytes(line))
        previous = line
    return Image(width, height, channels, rows)
