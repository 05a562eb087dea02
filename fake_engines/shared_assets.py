"""The shared assets of every fake engine: thumbnails and the favicon (small solid PNGs) and web fonts."""

from __future__ import annotations

import struct
import zlib
from functools import lru_cache

from fake_engines.engine_pages import Reply


@lru_cache(maxsize=256)
def png_bytes(name: str, size: int = 16) -> bytes:
    """A small valid PNG, a solid colour chosen from ``name``."""
    seed = zlib.crc32(name.encode("utf-8"))
    rgb = bytes(((seed >> 16) & 0xFF, (seed >> 8) & 0xFF, seed & 0xFF))
    raw = b"".join(b"\x00" + rgb * size for _ in range(size))

    def chunk(tag: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data))

    header = struct.pack(">IIBBBBB", size, size, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


@lru_cache(maxsize=16)
def font_bytes(name: str) -> bytes:
    """Some bytes standing in for a web font (browsers reject them and fall back, which is fine)."""
    filler = b"".join(struct.pack(">I", zlib.crc32(f"{name}/{i}".encode())) for i in range(512))
    return b"wOF2" + filler


def asset(path: str) -> Reply:
    cache = [("Cache-Control", "public, max-age=86400")]
    if path.startswith("/fonts/"):
        return Reply(200, font_bytes(path), "font/woff2", cache, served="font", kind="asset")
    if path == "/favicon.ico":
        return Reply(200, png_bytes(path), "image/x-icon", cache, served="image", kind="asset")
    return Reply(
        200, png_bytes(path, 32 if "logo" not in path else 24), "image/png", cache, served="image", kind="asset"
    )
