"""Arguments checked (issue 34): a spider or command argument the project does not understand is refused with exit
2, in one line naming it, what was given and what is accepted, before the configuration is read and before any
crawler or browser starts; ``once`` takes CONTRACT.md's words only; ``--help`` lists each sub-command on its own
line. The commands run in this process through Scrapy's own ``execute`` (as ``scrapy`` runs them); the spider is
the real Google spider, built as Scrapy (and Scrapyd's ``scrapy crawl``) builds it."""

from __future__ import annotations

import importlib
import pkgutil
import re
from pathlib import Path

import pytest
from scrapy.cmdline import execute

import topicstreams.commands
from tests.support.crawler import project_crawler
from tests.support.project import write_config
from topicstreams.cli.configured import SubcommandCommand
from topicstreams.cli.usage import operand_bounds
from topicstreams.crawl.arguments import ArgumentRefused, SpiderArguments, spider_arguments

ONCE_REFUSED = "-a once: got 'maybe', expected 1, true, yes, 0, false or no"


@pytest.fixture
def scrapy(monkeypatch: pytest.MonkeyPatch, capsys, tmp_path: Path):
    """``scrapy ARGV…`` in this process, in ``tmp_path``, on a config there: (exit status, stdout, stderr)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SCRAPY_SETTINGS_MODULE", "topicstreams.settings")
    monkeypatch.setenv("TOPICSTREAMS_CONFIG", str(write_config(tmp_path, {"database": {"url": "sqlite:///news.db"}})))

    def run(*argv: str) -> tuple[int, str, str]:
        capsys.readouterr()
        with pytest.raises(SystemExit) as exited:
            execute(["scrapy", *argv])
        out, err = capsys.readouterr()
        return int(exited.value.code or 0), out, err

    return run


# ---- the spider's arguments, read ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("value", "once"),
    [("1", True), ("true", True), ("YES", True), (" True ", True), ("0", False), ("false", False), ("No", False)],
)
def test_once_takes_the_contracts_words(value, once):
    assert spider_arguments({"once": value}) == SpiderArguments(topics=None, once=once)
    assert spider_arguments({"once": once}).once is once  # a program's bool


@pytest.mark.parametrize("value", ["maybe", "", "on", "off", "2", "y"])
def test_once_refuses_anything_else_naming_itself(value):
    with pytest.raises(ArgumentRefused) as refused:
        spider_arguments({"once": value})
    assert str(refused.value) == f"-a once: got {value!r}, expected 1, true, yes, 0, false or no"


def test_an_unknown_name_is_refused_with_the_names_taken_and_a_guess():
    with pytest.raises(ArgumentRefused, match=r"^-a onec: .* expected topics or once \(did you mean once\?\)$"):
        spider_arguments({"onec": "1"})
    with pytest.raises(ArgumentRefused, match=r"^-a colour: .* expected topics or once$"):
        spider_arguments({"topics": "a", "colour": "red"})
    # Scrapyd passes _job (and _version) to every job as spider arguments: a scheduler's own, let through
    assert spider_arguments({"_job": "abc", "_version": "1", "topics": " a, b,a"}) == SpiderArguments(["a", "b"])
    assert spider_arguments({"engines": "google"}, ("topics", "once", "engines")) == SpiderArguments()


def test_the_spider_refuses_what_it_does_not_understand_however_it_is_run(tmp_path, monkeypatch):
    """A script's CrawlerProcess, Scrapyd's job: every way goes through the spider's ``__init__``."""
    monkeypatch.chdir(tmp_path)
    crawler = project_crawler(tmp_path)
    with pytest.raises(ArgumentRefused, match=re.escape(ONCE_REFUSED)):
        crawler.spidercls.from_crawler(crawler, once="maybe")
    with pytest.raises(ArgumentRefused, match="^-a topic: "):
        crawler.spidercls.from_crawler(crawler, topic="x")
    spider = crawler.spidercls.from_crawler(crawler, topics="a,b", once="yes", _job="7f3a")
    assert (spider.topics_arg, spider.once, spider._job) == (["a", "b"], True, "7f3a")
    assert crawler.spidercls.from_crawler(crawler).once is False


# ---- the commands -------------------------------------------------------------------------------------------
REFUSALS = [
    (["crawl", "google", "-a", "once=maybe"], ONCE_REFUSED),
    (["crawl", "google", "-a", "onec=1"], "-a onec: not an argument of this crawl: expected topics or once"),
    (["crawl", "google", "-a", "topic=x", "-a", "once=1"], "-a topic: not an argument of this crawl"),
    (["crawl", "altavista"], "unknown engine 'altavista': expected one of google, bing, yahoo, brave"),
    (["crawl"], "name the engine to crawl: one of google, bing, yahoo, brave"),
    (["crawl", "google", "bing"], "crawl takes one engine: got 'google bing'"),
    (["crawl", "google", "--once"], "unknown option --once"),
    (["crawlall", "-a", "once=maybe"], ONCE_REFUSED),
    (["crawlall", "-a", "engine=google"], "-a engine: not an argument of this crawl: expected topics, once or engines"),
    (["crawlall", "-a", "engines="], "-a engines= names no engine: give some of google, bing, yahoo, brave"),
    (["crawlall", "-a", "engines=google,altavista"], "-a engines: unknown engine altavista: expected some of google"),
    (["crawlall", "google"], "crawlall takes no positional arguments: got 'google'"),
    (["topics"], "no sub-command given: expected one of: add, list, deactivate, activate"),
    (["topics", "rename", "x"], "unknown sub-command 'rename': expected one of: add, list, deactivate, activate"),
    (["topics", "add"], "add takes NAME…: none given"),
    (["topics", "list", "all"], "list takes no argument: got 'all'"),
    (["topics", "list", "--json"], "unknown option --json"),
    (["topics", "add", "-x"], "unknown option -x: see --help for the options this command takes (an argument that"),
    (["config", "check", "now"], "check takes no argument: got 'now'"),
    (["config", "verify"], "unknown sub-command 'verify': expected one of: check, show"),
    (["db", "upgrade", "now"], "upgrade takes no argument: got 'now'"),
    (["db", "replay", "a.jsonl", "b.jsonl"], "replay takes [PATH]: got 'a.jsonl b.jsonl'"),
    (["db", "migrate"], "unknown sub-command 'migrate': expected one of: upgrade, replay"),
    (["alerts", "list", "today"], "list takes no argument: got 'today'"),
    (["alerts", "send"], "unknown sub-command 'send': expected one of: test, list"),
    (["alerts", "test", "--json"], "--since and --json go with list, not with test"),
    (["health", "--jsn"], "unknown option --jsn"),
    (["health", "resume", "altavista"], "unknown engine 'altavista': expected one of google, bing, yahoo, brave"),
    (["nodes", "all"], "nodes takes no positional arguments: got 'all'"),
    (["routes", "all"], "unknown sub-command 'all': expected none (the report) or check"),
    (["routes", "check", "now"], "check takes no argument: got 'now'"),
    (["serve", "--port", "0"], "--port 0: expected a port number from 1 to 65535"),
    (["serve", "--port", "http"], "argument --port: invalid int value: 'http'"),
    (["serve", "--host", " "], "--host is empty"),
    (["serve", "now"], "serve takes no positional arguments: got 'now'"),
    (["demo", "now"], "demo takes no positional arguments: got 'now'"),
    (["demo", "--seconds", "0"], "--seconds: got 0, expected a number of seconds above 0"),
    (["demo", "--seconds", "inf"], "--seconds: got inf, expected a number of seconds above 0"),
    (["demo", "--folder", ""], "--folder is empty"),
]


def test_every_command_refuses_what_it_does_not_understand_in_one_line_with_exit_2(scrapy, tmp_path):
    for argv, expected in REFUSALS:
        status, out, err = scrapy(*argv)
        assert status == 2, (argv, err)
        assert out == "", argv
        [line] = err.strip().splitlines()  # one line: no usage banner, no traceback, no crawler's start-up lines
        assert line.startswith(f"scrapy {argv[0]}: error: {expected}"), (argv, line)
    # refused before anything was made: no database, no browser profile, no journal
    assert sorted(path.name for path in tmp_path.iterdir()) == ["config.yml"]


def test_arguments_are_refused_before_the_configuration_is_read_and_into_the_jobs_log(scrapy, tmp_path, monkeypatch):
    """Scrapyd runs ``scrapy crawl`` with ``-s LOG_FILE=…``: its job's log says why it ended."""
    broken = write_config(tmp_path, {"scraper": {"max_pages": 0}}, "broken.yml")
    monkeypatch.setenv("TOPICSTREAMS_CONFIG", str(broken))
    status, _, err = scrapy("crawl", "google", "-a", "once=maybe", "-a", "_job=7f3a", "-s", "LOG_FILE=job.log")
    assert status == 2 and err.strip() == f"scrapy crawl: error: {ONCE_REFUSED}"
    [logged] = (tmp_path / "job.log").read_text().splitlines()
    assert logged.endswith(f"ERROR: scrapy crawl: error: {ONCE_REFUSED}")
    status, _, err = scrapy("crawl", "google", "-a", "once=1")  # a valid argument: the config error, as before
    assert status == 78 and err.startswith("config error: scraper.max_pages"), err


def test_what_follows_a_double_dash_is_positional_whatever_it_looks_like(scrapy):
    status, out, err = scrapy("topics", "add", "--", "-x")
    assert (status, out, err) == (0, "added: -x\n", "")


def test_a_folder_that_is_not_a_demos_is_never_emptied(scrapy, tmp_path):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me")
    (mine / "config.yml").write_text("{}")  # a demo writes one too: not enough to be a demo's
    status, _, err = scrapy("demo", "--folder", str(mine), "--no-serve")
    assert status == 2 and f"--folder {mine}: it holds files and no demo.db, so it is not an earlier demo's" in err
    assert (mine / "notes.txt").read_text() == "keep me"


# ---- --help ---------------------------------------------------------------------------------------------------
def subcommand_commands() -> dict[str, type[SubcommandCommand]]:
    """Every project command that has sub-commands, by name."""
    found = {}
    for module in pkgutil.iter_modules(topicstreams.commands.__path__):
        command = getattr(importlib.import_module(f"topicstreams.commands.{module.name}"), "Command", None)
        if command is not None and issubclass(command, SubcommandCommand):
            found[module.name] = command
    return found


def test_help_lists_each_subcommand_on_its_own_line(scrapy):
    commands = subcommand_commands()
    assert {"topics", "health", "db", "alerts", "config", "routes"} <= set(commands)
    for name, command in commands.items():
        status, out, _ = scrapy(name, "--help")
        assert status == 0, name
        lines = out.splitlines()
        for subcommand, description in command.subcommands.items():
            # the sub-command first on its line (its operands after it), then its description
            line = re.compile(rf"  {re.escape(subcommand)}( [A-Z\[][^ ]*)* {{2,}}{re.escape(description.split()[0])} ")
            assert len([each for each in lines if line.match(each)]) == 1, (name, subcommand, out)


def test_operand_syntax_gives_how_many_arguments_a_subcommand_takes():
    assert operand_bounds("") == (0, 0)
    assert operand_bounds("ENGINE") == (1, 1)
    assert operand_bounds("[PATH]") == (0, 1)
    assert operand_bounds("NAME…") == (1, None)
    assert operand_bounds("[NAME…]") == (0, None)
