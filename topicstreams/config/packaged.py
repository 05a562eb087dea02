"""The packaged defaults (``defaults.yml``, read with :mod:`pkgutil`: they load from a zipped egg under Scrapyd too).

The file holds two YAML documents: the configuration's defaults, then the defaults of an entry of the lists whose
entries have keys of their own (``alerting.digests``, ``canaries.queries``). It is the one place of the
configuration's defaults.
"""

from __future__ import annotations

import pkgutil
from dataclasses import dataclass
from typing import Any

import yaml

DIGESTS, CANARIES = "alerting.digests", "canaries.queries"
"""The lists whose entries have packaged defaults (their keys in the second document)."""


@dataclass(frozen=True)
class Packaged:
    """Both documents of ``defaults.yml``, read once (the caller owns them: each read is a fresh copy)."""

    config: dict[str, Any]
    """The configuration's defaults."""
    entries: dict[str, dict[str, Any]]
    """The defaults of one entry, by list (:data:`DIGESTS`, :data:`CANARIES`)."""

    @property
    def health_signals(self) -> tuple[str, ...]:
        """The signals of the health score, in the order that breaks ties: the packaged ``health.weights``."""
        return tuple(self.config["health"]["weights"])


def read_packaged() -> Packaged:
    """``defaults.yml``, parsed (with libyaml's parser when PyYAML has it)."""
    raw = pkgutil.get_data("topicstreams.config", "defaults.yml")
    if raw is None:  # pragma: no cover - a broken install
        raise RuntimeError("topicstreams/config/defaults.yml is missing from the installed package")
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    config, entries = yaml.load_all(raw, Loader=loader)
    return Packaged(config, entries)


def load_defaults() -> dict[str, Any]:
    """The packaged defaults of the configuration (a fresh copy at each call)."""
    return read_packaged().config
