"""A real small disk for the full-disk tests: a tmpfs of a few KiB mounted on a folder, filled up and freed again.

The tests run as root here; where mounting is not allowed (no privilege, no tmpfs), :func:`small_disk` skips the
test with the reason.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

FILLER = ".filler"
"""The file that takes a disk's space (:func:`fill`), removed to free it (:func:`free`)."""


@contextlib.contextmanager
def small_disk(folder: Path, size_kib: int) -> Iterator[Path]:
    """``folder`` (made if missing) as a tmpfs of ``size_kib`` KiB while the block runs; unmounted after."""
    folder.mkdir(parents=True, exist_ok=True)
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size_kib}k,mode=0700", "tmpfs", str(folder)],
        capture_output=True,
        text=True,
    )
    if mounted.returncode != 0:
        pytest.skip(
            f"cannot mount a small tmpfs for the full-disk test here: {mounted.stderr.strip() or 'mount failed'}"
        )
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], capture_output=True)


def fill(folder: Path, leave: int = 0) -> int:
    """Fill the disk of ``folder`` until at most ``leave`` bytes are free (a file of its own); the bytes it took."""
    taken = 0
    fd = os.open(folder / FILLER, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        for block in (65536, 4096, 512, 1):
            while free_bytes(folder) > leave:
                try:
                    taken += os.write(fd, b"\0" * block)
                except OSError:
                    break
    finally:
        os.close(fd)
    return taken


def free(folder: Path) -> None:
    """Give back what :func:`fill` took."""
    (folder / FILLER).unlink(missing_ok=True)


def free_bytes(folder: Path) -> int:
    stats = os.statvfs(folder)
    return stats.f_bavail * stats.f_frsize
