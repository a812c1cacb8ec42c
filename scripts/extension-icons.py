#!/usr/bin/env python3
"""Draws the extension's icons (extension/icons/icon-{16,32,48,128}.png), which the Chrome Web
Store and the toolbar show: a blue rounded square with a white "wire" between two tabs. Run it
once after changing the drawing and commit the PNGs; nothing at build time runs it.
Standard library only: PNG is zlib-compressed RGBA rows behind a signature and three chunks."""

import os
import struct
import zlib

BLUE = (37, 99, 235, 255)
WHITE = (255, 255, 255, 255)
CLEAR = (0, 0, 0, 0)


def pixel(x, y):
    """The colour at (x, y) of the unit square [0, 1)², drawn once and scaled to each size."""
    r = 0.18  # corner radius
    cx, cy = min(max(x, r), 1 - r), min(max(y, r), 1 - r)
    if (x - cx) ** 2 + (y - cy) ** 2 > r * r:
        return CLEAR
    tab = lambda x0: x0 <= x <= x0 + 0.22 and 0.3 <= y <= 0.7  # noqa: E731
    wire = 0.22 <= x <= 0.78 and 0.45 <= y <= 0.55
    return WHITE if tab(0.14) or tab(0.64) or wire else BLUE


def png(size):
    rows = b""
    for j in range(size):
        row = b"\x00"  # filter: none
        for i in range(size):
            row += bytes(pixel((i + 0.5) / size, (j + 0.5) / size))
        rows += row

    def chunk(kind, data):
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", size, size, 8, 6, 0, 0, 0)  # 8-bit RGBA
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
            + chunk(b"IDAT", zlib.compress(rows, 9)) + chunk(b"IEND", b""))


if __name__ == "__main__":
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "extension", "icons")
    os.makedirs(out, exist_ok=True)
    for size in (16, 32, 48, 128):
        with open(os.path.join(out, f"icon-{size}.png"), "wb") as f:
            f.write(png(size))
