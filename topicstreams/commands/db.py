"""``scrapy db upgrade``: run the Alembic migrations on the configured database.
``scrapy db replay [PATH]``: write a journal of the store into the database by hand.

A crawl writes its engine's journal itself, at its next start (:mod:`topicstreams.storage.durable`); ``replay`` is
for a node that will not start again, or to try a reject file again after a fix. PATH is a journal
(``<engine>.jsonl``), a reject file (``<engine>.rejected.jsonl``: only named by hand), or a folder of journals;
by default this node's journal folder (``browser.profile_dir/<node>/journal``). A journal held by a running crawl
is left to it. Exits 0 when every journal named is written (or there was nothing to write), 1 otherwise.

A database that cannot be upgraded or written is said in one line (no traceback), exit 1; a damaged database file in
the words of :func:`~topicstreams.storage.damage_notice.damage_message` (it is neither upgraded nor written).
"""

from __future__ import annotations

import sys
from pathlib import Path

from scrapy.exceptions import UsageError
from sqlalchemy.exc import SQLAlchemyError

from topicstreams.cli.configured import SubcommandCommand
from topicstreams.config.secrets import mask_url
from topicstreams.storage import upgrade
from topicstreams.storage.batch_writes import replay_file
from topicstreams.storage.damage_notice import damage_of
from topicstreams.storage.failures import describe
from topicstreams.storage.journal import JournalInUse, is_rejects, journal_folder, pending_files, rejects_path
from topicstreams.storage.writer import NewsWriter


class Command(SubcommandCommand):
    subcommands = {
        "upgrade": "bring the database schema to the newest migration",
        "replay": "write a journal of items kept through a database outage (default: this node's journals)",
    }
    operands = {"replay": "[PATH]"}

    def short_desc(self) -> str:
        return "Manage the topicstreams database"

    def do_upgrade(self, config, args, opts) -> int:
        url = config.sections.database.url
        try:
            upgrade(url)
        except SQLAlchemyError as exc:
            print(
                damage_of(url, exc) or f"could not upgrade the database {mask_url(url)}: {describe(exc)}",
                file=sys.stderr,
            )
            return 1
        print(f"database up to date: {mask_url(url)}")
        return 0

    def do_replay(self, config, args, opts) -> int:
        if args:
            target = Path(args[0])
            if not target.exists():
                raise UsageError(f"no such journal or folder: {target}")
        else:
            target = journal_folder(config.sections.browser.profile_dir, config.sections.node.id)
        if target.is_dir():  # its journals that hold items (reject files only when named)
            files = [path for path, _ in pending_files(target) if not is_rejects(path)]
        else:
            files = [target] if target.stat().st_size else []
        if not files:
            print(f"nothing to replay: no journal with items in {target}")
            return 0
        try:
            writer = NewsWriter(self.database(config))
        except Exception as exc:
            url = config.sections.database.url
            damage = damage_of(url, exc)
            print(
                f"{damage}; the journals are kept as they are"
                if damage
                else f"cannot reach the database {mask_url(url)}: {describe(exc)}; the journals are kept as they are",
                file=sys.stderr,
            )
            return 1
        status = 0
        for path in files:
            batch_size = self.settings.getint("TOPICSTREAMS_STORE_BATCH_SIZE")
            status = max(status, self.replay_one(writer, path, batch_size, config.sections.database.url))
        return status

    @staticmethod
    def replay_one(writer: NewsWriter, path: Path, batch_size: int, url: str) -> int:
        try:
            done = replay_file(writer, path, batch_size=batch_size)
        except JournalInUse as exc:
            print(f"{exc}: left to it", file=sys.stderr)
            return 1
        except Exception as exc:  # the database went away again, or the file cannot be read
            damage = damage_of(url, exc)
            print(
                f"{path}: stopped: {damage}; the rest stays in the file"
                if damage
                else f"{path}: stopped: {describe(exc)}; what is written stays written, the rest stays in the file "
                f"(run it again)",
                file=sys.stderr,
            )
            return 1
        totals = done.result.totals()
        line = (
            f"{path}: {done.items} item(s) written ({totals['new_news']} new articles, "
            f"{totals['new_events']} new feed events)"
        )
        if done.rejected:
            where = path if is_rejects(path) else rejects_path(path)
            line += f"; {done.rejected} refused by the database, kept with the reason in {where}"
        print(line)
        return 0
