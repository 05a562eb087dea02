"""``python -m fake_engines serve [--host 127.0.0.1] [--port-base N] [--engines google,...] [--consent MODE[:LANG]]
[--world [--speed X] [--stale ENGINE] [--rated-seed N]]``

Starts the fake engines, prints the YAML config snippet pointing topicstreams at them (stdout, flushed),
then serves until SIGINT or SIGTERM.

``--world`` serves a news world (:mod:`fake_engines.world`) instead of the static catalogue: every topic keeps
publishing, each engine shows its own overlapping part, on a clock running ``--speed`` times as fast as the real one
(default 1). ``--stale ENGINE`` makes an engine serve yesterday's articles (repeatable, or comma-separated). While
it serves, ``POST /__fakes__/world`` on any engine's port with ``{"advance": seconds}`` and/or ``{"stale": ENGINE,
"on": true|false}`` changes it; ``GET /__fakes__/world`` tells its state. The world's settings go to stderr; stdout
is the config snippet alone, as without it. ``--rated-seed N`` (with ``--world``) makes it a rated world
(:mod:`fake_engines.rated_world`): each topic publishes at its own rate drawn from seed ``N`` (one a day … one a
minute), some with a story that breaks and fades in the first day.

``--consent MODE[:LANG]`` puts every engine's consent wall in front of its results (see
:mod:`fake_engines.consent_pages`): MODE is off, wall, redirect or broken; LANG is en (the default), ``local``
(each engine's second language: google de, yahoo it, bing fr, brave es) or a language every engine served has.
``--consent ENGINE=MODE[:LANG]`` sets one engine; the option may be repeated (later ones win).
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading

from fake_engines.rated_world import RatedWorld
from fake_engines.server import CONSENT_MODES, FakeEngines
from fake_engines.world import NewsWorld
from topicstreams import ENGINES


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m fake_engines", description="Fake news engines on loopback.")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    serve = commands.add_parser("serve", help="serve the fake engines until interrupted")
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)")
    serve.add_argument(
        "--port-base",
        type=int,
        default=None,
        metavar="N",
        help="fixed ports: google=N, bing=N+1, yahoo=N+2, brave=N+3 (default: free ports)",
    )
    serve.add_argument("--engines", default="google", help=f"comma-separated, of {','.join(ENGINES)} (default: google)")
    serve.add_argument("--verbose", action="store_true", help="log every request to stderr")
    serve.add_argument(
        "--consent",
        action="append",
        default=[],
        metavar="[ENGINE=]MODE[:LANG]",
        help=f"consent walls in front of the results: MODE one of {', '.join(CONSENT_MODES)}; LANG en "
        "(default), local (each engine's second language) or a language code; repeatable",
    )
    serve.add_argument(
        "--world",
        action="store_true",
        help="serve an evolving news world (new articles every few minutes, each engine its own part) "
        "instead of the static catalogue",
    )
    serve.add_argument(
        "--speed",
        type=float,
        default=None,
        metavar="X",
        help="with --world: world seconds per real second (default: 1)",
    )
    serve.add_argument(
        "--stale",
        action="append",
        default=[],
        metavar="ENGINE",
        help="with --world: ENGINE serves yesterday's articles; repeatable or comma-separated",
    )
    serve.add_argument(
        "--rated-seed",
        type=int,
        default=None,
        metavar="N",
        help="with --world: each topic publishes at its own rate (one a day to one a minute, some bursting), "
        "drawn from seed N",
    )
    return parser


def make_world(args: argparse.Namespace, engines: list[str]) -> NewsWorld | None:
    """The news world of ``--world``, ``--speed`` and ``--stale`` (None without ``--world``; ValueError on a bad
    value)."""
    stale = [name.strip() for spec in args.stale for name in spec.split(",") if name.strip()]
    if not args.world:
        if args.speed is not None or stale:
            raise ValueError("--speed and --stale need --world")
        if args.rated_seed is not None:
            raise ValueError("--rated-seed needs --world")
        return None
    speed = 1.0 if args.speed is None else args.speed
    world = NewsWorld(speed=speed) if args.rated_seed is None else RatedWorld(args.rated_seed, speed=speed)
    for name in stale:
        if name not in engines:
            raise ValueError(f"--stale {name}: engine {name!r} is not served here (served: {', '.join(engines)})")
        world.set_stale(name)
    return world


def apply_consent(fakes: FakeEngines, specs: list[str]) -> None:
    """Apply ``--consent`` values to ``fakes`` (ValueError on a bad one)."""
    for spec in specs:
        engine, sep, rest = spec.partition("=")
        if not sep:
            engine, rest = "", spec
        mode, _, language = rest.strip().partition(":")
        engines = [engine.strip()] if engine.strip() else list(fakes.engines)
        for name in engines:
            if name not in fakes.engines:
                raise ValueError(
                    f"--consent {spec}: engine {name!r} is not served here (served: {', '.join(fakes.engines)})"
                )
            lang = language.strip() or "en"
            if lang == "local":
                lang = fakes.consent_languages(name)[-1]
            fakes.consent(name, mode.strip(), lang)


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    engines = [name.strip() for name in args.engines.split(",") if name.strip()]
    if not engines:
        parser.error("--engines: no engine given")
    try:
        world = make_world(args, engines)
        fakes = FakeEngines(engines, host=args.host, ports=args.port_base, verbose=args.verbose, world=world)
        apply_consent(fakes, args.consent)
    except ValueError as exc:
        parser.error(str(exc))
    stop = threading.Event()

    def on_signal(signum: int, frame: object) -> None:
        stop.set()

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    try:
        fakes.start()
    except OSError as exc:
        print(f"cannot listen: {exc}", file=sys.stderr)
        return 1
    try:
        sys.stdout.write(fakes.config_snippet())
        sys.stdout.flush()
        if world is not None:
            rates = (
                f"rates per topic drawn from seed {world.seed}"
                if isinstance(world, RatedWorld)
                else f"a new article every ~{world.every:g} s per topic"
            )
            print(
                f"news world: speed {world.speed:g}, {rates}, "
                f"stale: {', '.join(world.stale_engines()) or 'none'}; POST /__fakes__/world to change it",
                file=sys.stderr,
                flush=True,
            )
        print("fake engines serving; Ctrl-C to stop", file=sys.stderr, flush=True)
        while not stop.wait(0.5):
            pass
    finally:
        fakes.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
