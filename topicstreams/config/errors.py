"""The configuration's error: the key, the value and what was expected; and the exit status that reports it."""

from __future__ import annotations

from typing import Any

from topicstreams.engines.topic_names import shown

EX_CONFIG = 78
"""Exit status for a configuration error (sysexits.h ``EX_CONFIG``)."""


class ConfigError(ValueError):
    """A configuration value is wrong: ``KEY: got VALUE, expected WHAT``."""

    def __init__(self, key: str, value: Any, expected: str) -> None:
        self.key, self.value, self.expected = key, value, expected
        super().__init__(f"{key}: got {_show(value)}, expected {expected}")


def _show(value: Any) -> str:
    if isinstance(value, str):
        return shown(value, longest=200)  # a 5,000-character topic is not printed whole
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
