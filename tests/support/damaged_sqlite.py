"""Real damaged SQLite files: a database with the project's schema, then cut short mid-page or given a garbage
header, as a full disk, a copy taken mid-write or a stray write leaves one."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from tests.support.databases import sqlite_database

DAMAGES = ("truncated", "bad header")
"""The two ways a test damages a file."""

SQLITE_SAYS = {"truncated": "database disk image is malformed", "bad header": "file is not a database"}
"""What SQLite says of each."""


@dataclass(frozen=True)
class DamagedFile:
    url: str
    path: Path
    how: str
    digest: str
    """The damaged file's SHA-256: nothing may write to it."""

    @property
    def said(self) -> str:
        return SQLITE_SAYS[self.how]

    def unchanged(self) -> bool:
        """Whether the file is as damaged as it was left (nobody wrote to it, nobody deleted it)."""
        return self.path.exists() and sha256(self.path) == self.digest


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def page_size(path: Path) -> int:
    """The page size of an SQLite file, from its header (bytes 16-17; 1 means 65536)."""
    size = int.from_bytes(path.read_bytes()[16:18], "big")
    return 65536 if size == 1 else size


def damage(path: Path, how: str) -> None:
    """Damage the SQLite file *path* in place: ``truncated`` cuts it in the middle of a page half-way through,
    ``bad header`` overwrites its 100-byte header."""
    if how == "truncated":
        page = page_size(path)
        pages = path.stat().st_size // page
        with path.open("r+b") as file:
            file.truncate(max(pages // 2, 1) * page + page // 2)
    elif how == "bad header":
        with path.open("r+b") as file:
            file.write((b"not an SQLite header; " * 5)[:100])
    else:
        raise ValueError(f"unknown damage {how!r}: expected one of {DAMAGES}")


def damaged_database(folder: Path, how: str, name: str = "news.db") -> DamagedFile:
    """An SQLite file *name* in *folder* with the newest schema (every change checkpointed into it), then damaged."""
    url = sqlite_database(folder, name)
    path = folder / name
    for suffix in ("-wal", "-shm"):  # the last connection checkpointed the WAL into the file; none is left behind
        leftover = path.with_name(path.name + suffix)
        assert not leftover.exists() or leftover.stat().st_size == 0 or suffix == "-shm", leftover
        leftover.unlink(missing_ok=True)
    damage(path, how)
    return DamagedFile(url, path, how, sha256(path))
