"""Token cost of an image part, by OpenAI's published tiling rule.

`detail: low` costs 85 tokens. Otherwise the image is scaled to fit 2048×2048, then its short
side to 768, and costs 85 + 170 per 512-pixel tile. Dimensions come from the header of a
`data:` URI (PNG, GIF, JPEG, WebP); for a remote URL they are unknown and we charge the most
any image can cost (768×2048: 8 tiles), so the count stays an upper bound.
"""

from __future__ import annotations

import base64
import binascii
import math
import struct

BASE_TOKENS = 85
TILE_TOKENS = 170
MAX_TOKENS = BASE_TOKENS + TILE_TOKENS * 8
HEADER_B64_CHARS = 4096  # enough base64 to reach a JPEG's SOF marker in practice


def image_tokens(image_url: object) -> int:
    if not isinstance(image_url, dict):
        return MAX_TOKENS
    if image_url.get("detail") == "low":
        return BASE_TOKENS
    url = image_url.get("url")
    size = image_size(url) if isinstance(url, str) else None
    if size is None:
        return MAX_TOKENS
    return tiled_tokens(*size)


def tiled_tokens(width: int, height: int) -> int:
    if width <= 0 or height <= 0:
        return MAX_TOKENS
    scale = min(1.0, 2048 / max(width, height))
    w, h = width * scale, height * scale
    scale = min(1.0, 768 / min(w, h))
    w, h = w * scale, h * scale
    return BASE_TOKENS + TILE_TOKENS * math.ceil(w / 512) * math.ceil(h / 512)


def image_size(url: str) -> tuple[int, int] | None:
    if not url.startswith("data:") or ";base64," not in url[:100]:
        return None
    encoded = url.split(",", 1)[1][:HEADER_B64_CHARS]
    encoded = encoded[: len(encoded) - len(encoded) % 4]
    try:
        head = base64.b64decode(encoded)
    except (binascii.Error, ValueError):
        return None
    return _dimensions(head)


def _dimensions(head: bytes) -> tuple[int, int] | None:
    if head.startswith(b"\x89PNG\r\n\x1a\n") and len(head) >= 24:
        width, height = struct.unpack(">II", head[16:24])
        return width, height
    if head[:6] in (b"GIF87a", b"GIF89a") and len(head) >= 10:
        width, height = struct.unpack("<HH", head[6:10])
        return width, height
    if head.startswith(b"RIFF") and head[8:12] == b"WEBP":
        return _webp(head)
    if head.startswith(b"\xff\xd8"):
        return _jpeg(head)
    return None


def _webp(head: bytes) -> tuple[int, int] | None:
    chunk = head[12:16]
    if chunk == b"VP8X" and len(head) >= 30:
        width = int.from_bytes(head[24:27], "little") + 1
        height = int.from_bytes(head[27:30], "little") + 1
        return width, height
    if chunk == b"VP8 " and len(head) >= 30:
        width, height = struct.unpack("<HH", head[26:30])
        return width & 0x3FFF, height & 0x3FFF
    if chunk == b"VP8L" and len(head) >= 25:
        bits = int.from_bytes(head[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    return None


def _jpeg(head: bytes) -> tuple[int, int] | None:
    i = 2
    while i + 9 < len(head):
        if head[i] != 0xFF:
            return None
        marker = head[i + 1]
        length = struct.unpack(">H", head[i + 2 : i + 4])[0]
        # Start-of-frame markers carry the dimensions (C4/C8/CC are not frames).
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            height, width = struct.unpack(">HH", head[i + 5 : i + 9])
            return width, height
        i += 2 + length
    return None
