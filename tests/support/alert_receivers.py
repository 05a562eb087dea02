"""Real receivers of alerts on 127.0.0.1, for the tests of every kind of alert: a JSON/HTTP receiver (Apprise's
``json://`` and the plain ``alerting.webhook_url`` POST) and an SMTP server (Apprise's ``mailto://``).

* :class:`JsonReceiver` — a ``ThreadingHTTPServer`` on a free port that records every POST (path, headers, the
  JSON body) and answers 200, or 500 for the next N requests (:meth:`JsonReceiver.fail_next`) and for the paths
  told (:meth:`JsonReceiver.fail_path`);
  :meth:`~JsonReceiver.apprise_url` gives ``json://127.0.0.1:PORT/path``, :meth:`~JsonReceiver.http_url` the
  ``http://`` URL of a webhook;
* :class:`SmtpReceiver` — an ``aiosmtpd`` server on a free port, without TLS, that records every message (parsed
  with :mod:`email`), optionally asking for a login; :meth:`~SmtpReceiver.apprise_url` gives the ``mailto://``
  URL Apprise needs for it (``mode=insecure``: plain SMTP, no STARTTLS; ``from`` and ``to`` in the query);
* the fixtures ``json_receiver`` and ``smtp_receiver`` (this module is a plugin of tests/conftest.py: a test asks
  for them by name) and :func:`wait_for`.
"""

from __future__ import annotations

import email
import email.policy
import json
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from email.message import EmailMessage
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import quote

import pytest

from tests.support.ports import free_port

MAIL_FROM = "alerts@topicstreams.example"
MAIL_TO = "ops@topicstreams.example"


def wait_for(predicate: Callable[[], Any], timeout: float = 10.0, interval: float = 0.05) -> Any:
    """Ask ``predicate`` until it answers something true or ``timeout`` seconds pass; its last answer."""
    deadline = time.monotonic() + timeout
    while True:
        answer = predicate()
        if answer or time.monotonic() >= deadline:
            return answer
        time.sleep(interval)


# ---- HTTP -------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Posted:
    """One POST the receiver took: its path (with the query), headers, body as JSON (None if it was not JSON),
    and the status it answered."""

    path: str
    headers: dict[str, str]
    body: Any
    raw: bytes
    status: int


class JsonReceiver:
    """Records every POST; answers 200, or 500 for the next :meth:`fail_next` requests."""

    def __init__(self, port: int = 0) -> None:
        """On ``port`` (0: a free one the system picks)."""
        self.posted: list[Posted] = []
        self._lock = threading.Lock()
        self._failing = 0
        self._failing_paths: set[str] = set()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = None
                with receiver._lock:
                    broken = any(self.path.startswith(prefix) for prefix in receiver._failing_paths)
                    status = 500 if broken or receiver._failing > 0 else 200
                    if not broken:
                        receiver._failing = max(0, receiver._failing - 1)
                    receiver.posted.append(Posted(self.path, dict(self.headers.items()), body, raw, status))
                answer = b'{"ok": true}' if status == 200 else b'{"error": "down for the test"}'
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self._thread = threading.Thread(
            target=self.server.serve_forever, args=(0.05,), name="json-receiver", daemon=True
        )

    def start(self) -> JsonReceiver:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def fail_next(self, count: int) -> None:
        """Answer 500 to the next ``count`` requests."""
        with self._lock:
            self._failing = count

    def fail_path(self, prefix: str) -> None:
        """Answer 500 to every request whose path starts with ``prefix``, from now on."""
        with self._lock:
            self._failing_paths.add(prefix)

    def received(self, path_prefix: str = "/") -> list[Posted]:
        """The POSTs so far whose path starts with ``path_prefix``."""
        with self._lock:
            return [posted for posted in self.posted if posted.path.startswith(path_prefix)]

    def apprise_url(self, path: str = "/hook", user: str = "", password: str = "", query: str = "") -> str:
        """Apprise's ``json://`` URL of ``path`` here (with a login and a query if given)."""
        login = f"{quote(user, safe='')}:{quote(password, safe='')}@" if user else ""
        return f"json://{login}127.0.0.1:{self.port}{path}{'?' + query if query else ''}"

    def http_url(self, path: str = "/webhook") -> str:
        """The plain ``http://`` URL of ``path`` here (``alerting.webhook_url``)."""
        return f"http://127.0.0.1:{self.port}{path}"


# ---- SMTP -------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Mail:
    """One message the SMTP server took."""

    mail_from: str
    rcpt_tos: list[str]
    message: EmailMessage
    login: str | None

    @property
    def subject(self) -> str:
        return str(self.message["Subject"] or "")

    def part(self, subtype: str) -> str | None:
        """The text of the message's ``text/<subtype>`` part, or None."""
        found = self.message.get_body(preferencelist=(subtype,))
        if found is None or found.get_content_type() != f"text/{subtype}":
            return None
        return found.get_content()


class SmtpReceiver:
    """A plain SMTP server (no TLS) that records every message; with ``user`` and ``password`` it offers AUTH
    (without TLS) and refuses other logins."""

    def __init__(self, user: str = "", password: str = "") -> None:
        from aiosmtpd.controller import Controller
        from aiosmtpd.smtp import AuthResult

        self.user, self.password = user, password
        self.mails: list[Mail] = []
        self._lock = threading.Lock()
        receiver = self

        class Handler:
            async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
                message = email.message_from_bytes(
                    envelope.original_content or envelope.content, policy=email.policy.default
                )
                login = session.auth_data.decode() if isinstance(session.auth_data, bytes) else None
                with receiver._lock:
                    receiver.mails.append(Mail(envelope.mail_from, list(envelope.rcpt_tos), message, login))
                return "250 OK"

        def authenticator(server: Any, session: Any, envelope: Any, mechanism: str, auth_data: Any) -> Any:
            login = getattr(auth_data, "login", b"") or b""
            password = getattr(auth_data, "password", b"") or b""
            ok = bool(user) and login.decode() == user and password.decode() == password_expected
            return AuthResult(success=ok, handled=False, auth_data=login if ok else None)

        password_expected = password
        options: dict[str, Any] = {"authenticator": authenticator, "auth_require_tls": False} if user else {}
        self.port = free_port()
        self.controller = Controller(Handler(), hostname="127.0.0.1", port=self.port, **options)

    def start(self) -> SmtpReceiver:
        self.controller.start()
        return self

    def stop(self) -> None:
        self.controller.stop()

    def received(self) -> list[Mail]:
        with self._lock:
            return list(self.mails)

    def apprise_url(self, to: str = MAIL_TO, mail_from: str = MAIL_FROM, password: str | None = None) -> str:
        """Apprise's ``mailto://`` URL of this server: plain SMTP (``mode=insecure``), from ``mail_from`` to
        ``to``, logging in when the server asks for it (``password``: another one, to be refused)."""
        login = ""
        if self.user:
            secret = self.password if password is None else password
            login = f"{quote(self.user, safe='')}:{quote(secret, safe='')}@"
        return (
            f"mailto://{login}127.0.0.1:{self.port}?mode=insecure&from={quote(mail_from, safe='@')}"
            f"&to={quote(to, safe='@')}"
        )


# ---- fixtures ---------------------------------------------------------------------------------------------------
@pytest.fixture
def json_receiver() -> Iterator[JsonReceiver]:
    receiver = JsonReceiver().start()
    try:
        yield receiver
    finally:
        receiver.stop()


SMTP_USER = "alerts-sender"
SMTP_PASSWORD = "Sm7p-pa55word-do-not-log"
"""The login the ``smtp_receiver`` fixture asks for (the password is a secret the tests look for in logs)."""


@pytest.fixture
def smtp_receiver() -> Iterator[SmtpReceiver]:
    """An SMTP server asking for the login :data:`SMTP_USER` / :data:`SMTP_PASSWORD`."""
    receiver = SmtpReceiver(SMTP_USER, SMTP_PASSWORD).start()
    try:
        yield receiver
    finally:
        receiver.stop()
