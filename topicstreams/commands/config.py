"""``scrapy config check`` / ``scrapy config show``."""

from __future__ import annotations

import yaml

from topicstreams.cli.configured import SubcommandCommand


class Command(SubcommandCommand):
    subcommands = {
        "check": "validate the merged configuration (exit 78 with one line on a problem)",
        "show": "print the merged configuration, secrets masked",
    }

    def short_desc(self) -> str:
        return "Validate or print the topicstreams configuration"

    def do_check(self, config, args, opts) -> int:
        source = str(config.source) if config.source else "packaged defaults only"
        print(f"config ok ({source})")
        return 0

    def do_show(self, config, args, opts) -> int:
        print(yaml.safe_dump(config.masked(), sort_keys=False, allow_unicode=True), end="")
        return 0
