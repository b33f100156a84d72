"""A minimal lossless PNG writer tuned for page images.

Pillow's encoder picks a PNG filter per row, which costs more than the zlib
work itself on a page; filter type 0 with zlib level 1 encodes a 150 DPI text
page in about half the time at a similar size (text pages are mostly runs of one
level, which deflate handles well without prediction). zlib-ng (a dependency with
wheels for the common platforms; plain zlib where it is missing) at level 2 deflates
a 150 DPI page smaller than zlib at level 1 in less than half the time (scan: 104
KiB in 2.6 ms instead of 117 KiB in 6.2; dense text: 148 KiB in 4.0 ms instead of 168
in 7.7); its level 1 is faster still but 15-25% larger.
"""

from __future__ import annotations

import base64
import struct
import zlib

from PIL import Image

try:
    from zlib_ng import zlib_ng as deflate
except ImportError:  # pragma: no cover - a platform without a zlib-ng wheel
    deflate = zlib  # type: ignore[misc]

_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_COLOUR_TYPE = {"L": 0, "RGB": 2}
_DATA_URL_PREFIX = b"data:image/png;base64,"


def encode_png(image: Image.Image, level: int = 2) -> bytes:
    """Encode an L or RGB image as an 8-bit PNG with filter type 0 on every row."""
    colour_type = _COLOUR_TYPE[image.mode]
    width, height = image.size
    stride = width * (1 if colour_type == 0 else 3)
    raw = memoryview(image.tobytes())
    compressor = deflate.compressobj(level)
    parts = []
    row_filter = b"\x00"
    # Compress in bands of rows: bounded temporary memory, few Python-level calls.
    band = max(1, (1 << 20) // (stride + 1))
    for top in range(0, height, band):
        rows = b"".join(
            row_filter + raw[offset:offset + stride]
            for offset in range(top * stride, min(height, top + band) * stride, stride)
        )
        parts.append(compressor.compress(rows))
    parts.append(compressor.flush())
    header = struct.pack(">IIBBBBB", width, height, 8, colour_type, 0, 0, 0)
    return b"".join((_SIGNATURE, _chunk(b"IHDR", header), _chunk(b"IDAT", b"".join(parts)),
                     _chunk(b"IEND", b"")))


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def png_data_url(png: bytes) -> bytes:
    """The PNG as the ``data:`` URL the chat API takes an image in (ASCII bytes).

    Made where the page is rendered (a worker thread or process), so the event loop
    never spends the 0.6 ms a 150 DPI page's base64 costs.
    """
    return _DATA_URL_PREFIX + base64.b64encode(png)


def png_from_data_url(data_url: bytes) -> bytes:
    """The PNG bytes of a URL made by :func:`png_data_url`."""
    return base64.b64decode(data_url[len(_DATA_URL_PREFIX):])
