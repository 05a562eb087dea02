"""``python -m topicstreams.cli.together`` (what ``make run`` runs): the crawl and the web app, side by side.

It brings the database up to date (``scrapy db upgrade``; on a failure its exit status is ours), prints the URL of
the feed as its first line, then runs ``scrapy serve`` and ``scrapy crawlall`` as two child processes on the same
configuration until SIGINT or SIGTERM. Their log lines pass through; once the crawl says it has started (its
``crawl started:`` line), the URL is printed again, below the start-up lines that pushed the first one up.

* A signal to the supervisor is forwarded to both children: SIGINT to the crawl (Scrapy stops gracefully, and
  forcibly on a second one), SIGTERM to the web app. Each child runs in its own process group, so a Ctrl-C at the
  terminal reaches the supervisor alone and each child gets it once. Exit status 0 when both then end cleanly.
* A child that ends on its own stops the other, with one line saying which one ended; exit status 1.
* A child still running ``GRACE`` seconds after it was asked to stop is killed, with its process group.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time

from topicstreams.cli.crawl_summary import STARTED
from topicstreams.config.errors import EX_CONFIG, ConfigError
from topicstreams.config.loading import load_config
from topicstreams.web.app import WebSettings

GRACE = 30.0
"""Seconds a child has to end once asked to stop, before it is killed."""

CHILDREN = {"scrapy serve": ("serve",), "scrapy crawlall": ("crawlall",)}
STOP_SIGNAL = {"scrapy crawlall": signal.SIGINT}  # the others get SIGTERM
RELAYED = "scrapy crawlall"
"""The child whose standard error passes through the supervisor, which prints the URL again after its start line."""
SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)  # SIGHUP: the terminal went away


def describe(returncode: int) -> str:
    return f"killed by {signal.Signals(-returncode).name}" if returncode < 0 else f"exit status {returncode}"


def exit_status(returncode: int) -> int:
    """A child's return code as a shell reports it (128 + N for a death by signal N)."""
    return 128 - returncode if returncode < 0 else returncode


class Together:
    """The children, and what is done with them: start, forward a stop, wait, kill what will not stop."""

    def __init__(self) -> None:
        self.children: dict[str, subprocess.Popen] = {}
        self.asked: set[str] = set()  # the children asked to stop
        self.stop_requested = False  # by a signal to the supervisor
        self.deadline: float | None = None  # when the children still running get killed
        self.relays: list[threading.Thread] = []  # the threads passing a child's log lines on

    def on_signal(self, signum: int, frame: object) -> None:
        self.stop_requested = True
        self.stop()

    def start(self, name: str, *args: str, **kwargs) -> subprocess.Popen:
        # Its own process group: the terminal's Ctrl-C reaches the supervisor only, which forwards it once.
        process = subprocess.Popen(
            [sys.executable, "-m", "scrapy", *args], stdin=subprocess.DEVNULL, process_group=0, **kwargs
        )
        self.children[name] = process
        if self.stop_requested and name not in self.asked:  # the signal came while it was being started
            self.ask_to_stop(name)
        return process

    def running(self) -> list[str]:
        return [name for name, process in self.children.items() if process.poll() is None]

    def stop(self) -> None:
        """Ask every running child to stop (each call asks again: a second SIGINT forces Scrapy)."""
        for name in self.running():
            self.ask_to_stop(name)

    def ask_to_stop(self, name: str) -> None:
        self.children[name].send_signal(STOP_SIGNAL.get(name, signal.SIGTERM))
        self.asked.add(name)
        if self.deadline is None:
            self.deadline = time.monotonic() + GRACE

    def kill_late(self) -> None:
        if self.deadline is None or time.monotonic() < self.deadline:
            return
        for name in self.running():
            print(f"topicstreams: {name} did not stop within {GRACE:g} s; killing it", file=sys.stderr, flush=True)
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.children[name].pid, signal.SIGKILL)
            self.children[name].wait()

    def run(self, url: str) -> int:
        for signum in SIGNALS:
            signal.signal(signum, self.on_signal)
        try:
            upgrade = self.start("scrapy db upgrade", "db", "upgrade", stdout=subprocess.PIPE, text=True)
            output, _ = upgrade.communicate()
            del self.children["scrapy db upgrade"]
            if upgrade.returncode != 0 or self.stop_requested:
                sys.stdout.write(output)
                return exit_status(upgrade.returncode)
            print(f"topicstreams: open {url} to read the feed", flush=True)
            sys.stdout.write(output)
            sys.stdout.flush()
            for name, args in CHILDREN.items():
                if not self.stop_requested:
                    self.start_child(name, args, url)
            return self.wait()
        finally:  # whatever happened, no child outlives the supervisor
            if self.running():
                self.stop()
            while self.running():
                self.kill_late()
                time.sleep(0.1)
            for relay in self.relays:  # the crawl's last lines (its summary) before ours
                relay.join(timeout=5)

    def start_child(self, name: str, args: tuple[str, ...], url: str) -> None:
        if name != RELAYED:
            self.start(name, *args)
            return
        process = self.start(name, *args, stderr=subprocess.PIPE, text=True, errors="replace", bufsize=1)
        relay = threading.Thread(target=self.relay, args=(process.stderr, url), name="crawl-log-relay", daemon=True)
        relay.start()
        self.relays.append(relay)

    @staticmethod
    def relay(stream, url: str) -> None:
        """Pass the crawl's log lines on to our standard error, and say the URL again after its start line."""
        announced = False
        for line in stream:
            sys.stderr.write(line)
            sys.stderr.flush()
            if not announced and STARTED in line:
                announced = True
                print(f"topicstreams: the crawl has started; open {url} to read the feed", flush=True)

    def wait(self) -> int:
        """Until every child has ended; the first to end on its own (unasked) stops the others."""
        ended_alone = None
        while self.running():
            if ended_alone is None and not self.stop_requested:
                ended_alone = next((name for name, p in self.children.items() if p.returncode is not None), None)
                if ended_alone is not None:
                    print(
                        f"topicstreams: {ended_alone} ended on its own "
                        f"({describe(self.children[ended_alone].returncode)}); stopping {', '.join(self.running())}",
                        file=sys.stderr,
                        flush=True,
                    )
                    self.stop()
            self.kill_late()
            time.sleep(0.1)
        if self.stop_requested and ended_alone is None:
            clean = all(p.returncode in (0, -STOP_SIGNAL.get(n, signal.SIGTERM)) for n, p in self.children.items())
            return 0 if clean else 1
        if ended_alone is None:  # all of them ended between two looks
            print(
                "topicstreams: "
                + ", ".join(f"{n} ({describe(p.returncode)})" for n, p in self.children.items())
                + " ended on their own",
                file=sys.stderr,
                flush=True,
            )
        return 1


def main() -> int:
    try:
        config = load_config()
    except ConfigError as exc:
        print(f"config error: {exc}", file=sys.stderr)
        return EX_CONFIG
    return Together().run(WebSettings.from_config(config).url)


if __name__ == "__main__":
    sys.exit(main())
