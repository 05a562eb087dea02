"""A test extension: writes every ``response_classified`` signal to the JSON-lines file named by the setting
``TEST_CLASSIFICATIONS_FILE``, the way Health will consume them (by listening, never called)."""

from __future__ import annotations

import dataclasses
import json

from topicstreams.crawl.signals import response_classified


class ClassificationRecorder:
    def __init__(self, path: str) -> None:
        self.path = path

    @classmethod
    def from_crawler(cls, crawler):
        recorder = cls(crawler.settings.get("TEST_CLASSIFICATIONS_FILE"))
        crawler.signals.connect(recorder.record, signal=response_classified)
        return recorder

    def record(self, classification) -> None:
        with open(self.path, "a", encoding="utf-8") as out:
            out.write(json.dumps(dataclasses.asdict(classification), default=str) + "\n")
