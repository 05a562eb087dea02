"""How the project's commands talk about their own arguments: ``--help`` laid out line by line, a usage error in one
line, and the checks every command makes of its positional arguments.

Scrapy builds each command's parser (``scrapy.cmdline``) with a help formatter that reflows the description into
one paragraph, and reports a usage error as a ``Usage`` banner followed by the message. The project's commands
hand their parser to :func:`fit_parser`: the description keeps its lines (a command's sub-commands, one a line),
and an error is one line, ``scrapy NAME: error: what was given, what is accepted``, exit 2 — also for argparse's
own errors (``--port abc``).
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable

from scrapy.commands import ScrapyHelpFormatter
from scrapy.exceptions import UsageError

USAGE_EXIT = 2
"""The exit status of a command given arguments it does not understand (as argparse and Scrapy use it)."""

COLUMN_GAP = re.compile(r"(\s*\S.*?\s{2,})\S")
"""A line laid out in columns (``  add NAME…   add topics…``): its first column and the gap after it."""


class LineKeepingHelpFormatter(ScrapyHelpFormatter):
    """Scrapy's help formatter, but the description keeps its lines: each is wrapped on its own (a line laid out in
    columns hangs under its second column), where Scrapy's would run them together into one paragraph."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        lines = []
        for line in text.splitlines():
            if not line.strip():
                lines.append("")
                continue
            lead = line[: len(line) - len(line.lstrip())]
            columns = COLUMN_GAP.match(line)
            hang = " " * len(columns.group(1)) if columns else lead
            lines.append(
                textwrap.fill(
                    line.strip(), width, initial_indent=indent + lead, subsequent_indent=indent + hang
                ).rstrip()
            )
        return "\n".join(lines)


def fit_parser(parser, error: Callable[[str], None]) -> None:
    """Make Scrapy's ``parser`` of a project command keep the lines of its description, and report a usage error
    through ``error`` (which must not return) instead of its two-line banner."""
    parser.formatter_class = LineKeepingHelpFormatter
    parser.error = error


def refuse_unknown_options(args: list[str]) -> None:
    """Scrapy's parser leaves an option it does not know among the positional arguments (``--jsn``): refuse the
    first one, naming it. What follows ``--`` is positional, whatever it looks like (``topics add -- -x``); the
    ``--`` itself is taken out of ``args`` (in place: the command's ``run`` gets the same list)."""
    for index, arg in enumerate(args):
        if arg == "--":
            del args[index]
            return
        if arg.startswith("-") and len(arg) > 1:
            raise UsageError(
                f"unknown option {arg}: see --help for the options this command takes "
                "(an argument that begins with '-' goes after --)"
            )


def operand_bounds(operands: str) -> tuple[int, int | None]:
    """How many positional arguments a sub-command's ``operands`` syntax takes, at least and at most (None: no
    limit): ``""`` none, ``"ENGINE"`` one, ``"[PATH]"`` none or one, ``"NAME…"`` one or more, ``"[NAME…]"`` any."""
    words = operands.split()
    least = sum(1 for word in words if not word.startswith("["))
    most = None if any(word.endswith("…") or word.endswith("…]") for word in words) else len(words)
    return least, most


def refuse_operands(subcommand: str, operands: str, given: list[str]) -> None:
    """Refuse ``given`` positional arguments when ``subcommand``'s ``operands`` syntax does not take that many."""
    least, most = operand_bounds(operands)
    takes = f"takes {operands}" if operands else "takes no argument"
    if most is not None and len(given) > most:
        raise UsageError(f"{subcommand} {takes}: got {' '.join(given)!r}")
    if len(given) < least:
        raise UsageError(f"{subcommand} {takes}: none given")
