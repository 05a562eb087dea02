"""``python -m topicstreams.fakes serve [--host 127.0.0.1] [--port-base N] [--engines google,...]``

Starts the fake engines, prints the YAML config snippet pointing topicstreams at them (stdout, flushed),
then serves until SIGINT or SIGTERM.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading

from topicstreams import ENGINES
from topicstreams.fakes.server import FakeEngines


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m topicstreams.fakes", description="Fake news engines on loopback.")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    serve = commands.add_parser("serve", help="serve the fake engines until interrupted")
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)")
    serve.add_argument("--port-base", type=int, default=None, metavar="N",
                       help="fixed ports: google=N, bing=N+1, yahoo=N+2, brave=N+3 (default: free ports)")
    serve.add_argument("--engines", default="google", help=f"comma-separated, of {','.join(ENGINES)} (default: google)")
    serve.add_argument("--verbose", action="store_true", help="log every request to stderr")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    engines = [name.strip() for name in args.engines.split(",") if name.strip()]
    if not engines:
        parser.error("--engines: no engine given")
    try:
        fakes = FakeEngines(engines, host=args.host, ports=args.port_base, verbose=args.verbose)
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
