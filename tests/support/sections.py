"""Typed configuration sections for the tests that build a component by hand (the packaged defaults, with a test's
values over them as a user's file would give them)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from topicstreams.config.loading import merge
from topicstreams.config.packaged import load_defaults
from topicstreams.config.sections import AlertingSection, build_section


def alerting_section(alerting: Mapping[str, Any]) -> AlertingSection:
    """The ``alerting`` section: the packaged one with ``alerting`` (a mapping of its keys) over it."""
    return build_section(AlertingSection, merge(load_defaults()["alerting"], dict(alerting)), "alerting")
