"""``python -m topicstreams.fakes serve [--host 127.0.0.1] [--port-base N] [--engines google,...] [--consent MODE[:LANG]]``

Starts the fake engines, prints the YAML config snippet pointing topicstreams at them (stdout, flushed),
then serves until SIGINT or SIGTERM.

``--consent MODE[:LANG]`` puts every engine's consent wall in front of its results (see
:mod:`topicstreams.fakes.consent`): MODE is off, wall, redirect or broken; LANG is en (the default), ``local``
(each engine's second language: google de, yahoo it, bing fr, brave es) or a language every engine served has.
``--consent ENGINE=MODE[:LANG]`` sets one engine; the option may be repeated (later ones win).
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading

from topicstreams import ENGINES
from topicstreams.fakes.server import CONSENT_MODES, FakeEngines


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m topicstreams.fakes", description="Fake news engines on loopback.")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    serve = commands.add_parser("serve", help="serve the fake engines until interrupted")
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)")
    serve.add_argument("--port-base", type=int, default=None, metavar="N",
                       help="fixed ports: google=N, bing=N+1, yahoo=N+2, brave=N+3 (default: free ports)")
    serve.add_argument("--engines", default="google", help=f"comma-separated, of {','.join(ENGINES)} (default: google)")
    serve.add_argument("--verbose", action="store_true", help="log every request to stderr")
    serve.add_argument("--consent", action="append", default=[], metavar="[ENGINE=]MODE[:LANG]",
                       help=f"consent walls in front of the results: MODE one of {', '.join(CONSENT_MODES)}; LANG en "
                            "(default), local (each engine's second language) or a language code; repeatable")
    return parser


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
                raise ValueError(f"--consent {spec}: engine {name!r} is not served here (served: "
                                 f"{', '.join(fakes.engines)})")
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
        fakes = FakeEngines(engines, host=args.host, ports=args.port_base, verbose=args.verbose)
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
        print("fake engines serving; Ctrl-C to stop", file=sys.stderr, flush=True)
        while not stop.wait(0.5):
            pass
    finally:
        fakes.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
