"""The project as users run it: ``scrapy …`` in a scratch folder with the project's settings module, and the
config files the commands read."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
"""The repository's folder."""


class ScrapyRunner:
    """Runs ``scrapy …`` as users do, in its own folder, with the project's settings module."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.env = {
            k: v
            for k, v in os.environ.items()
            if k not in ("TOPICSTREAMS_CONFIG", "TOPICSTREAMS_DB_URL", "SCRAPER_PROXY")
        }
        self.env["SCRAPY_SETTINGS_MODULE"] = "topicstreams.settings"
        self.env["PYTHONPATH"] = str(REPO)

    def __call__(
        self, *args: str, timeout: float = 180, env: dict | None = None, check: bool = False
    ) -> subprocess.CompletedProcess:
        result = subprocess.run(
            [sys.executable, "-m", "scrapy", *args],
            cwd=self.folder,
            env={**self.env, **(env or {})},
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )
        if check and result.returncode != 0:
            raise AssertionError(f"scrapy {' '.join(args)} exited {result.returncode}:\n{result.stderr[-4000:]}")
        return result


def write_config(folder: Path, data: dict, name: str = "config.yml") -> Path:
    """*data* as the YAML file *name* in *folder* (relative paths in it are relative to *folder*)."""
    path = folder / name
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path
