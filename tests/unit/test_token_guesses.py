"""The admin token's slow-down counts attempts made at once (topicstreams/web/tokens.py): a client's wrong guesses
wait in line, each answered no sooner than the slow-downs of every one before it — by the line's arithmetic, and
through the app served by a real uvicorn with a hundred guesses sent together — while a right token from another
client is not held up, a right one from the guessing client waits its turn, a line too long is refused unjudged, and
the table of clients stays within its bound."""

from __future__ import annotations

import asyncio
import itertools
import time

import httpx

from tests.support.feed_data import serving
from topicstreams.storage.engine_status import pause, read_status
from topicstreams.web.tokens import FIRST_DELAY, MAX_DELAY, TokenCheck

TOKEN = "s3cret-admin-token-0123456789"
WRONG = "guess-guess-guess-guess"


def test_attempts_made_at_once_wait_in_line_behind_each_other():
    now = [100.0]
    check = TokenCheck(clock=lambda: now[0])
    waits = [check.attempt("a", WRONG, TOKEN).wait for _ in range(5)]  # five at the same instant
    slowdowns = [check.delay(n) for n in range(1, 6)]
    assert slowdowns == [0.0, FIRST_DELAY, 2 * FIRST_DELAY, 4 * FIRST_DELAY, 8 * FIRST_DELAY]
    assert waits == list(itertools.accumulate(slowdowns))  # each behind the ones before it
    other = check.attempt("b", TOKEN, TOKEN)
    assert (other.ok, other.wait) == (True, 0.0)  # another client is not held up
    right = check.attempt("a", TOKEN, TOKEN)
    assert right.ok and right.wait == waits[-1]  # the guessing client's right token waits its turn
    assert check.attempt("a", WRONG, TOKEN).wait == waits[-1] + 0.0  # a right one started the count over

    now[0] += 1_000.0
    check.attempt("a", WRONG, TOKEN)
    assert check.attempt("a", WRONG, TOKEN).wait == FIRST_DELAY  # the line has long gone out


def test_a_line_too_long_is_refused_without_judging_and_the_table_is_bounded():
    now = [0.0]
    check = TokenCheck(clock=lambda: now[0], max_line=20.0, max_clients=8)
    attempts = [check.attempt("a", WRONG, TOKEN) for _ in range(12)]
    refused = [attempt for attempt in attempts if attempt.refused]
    judged = [attempt for attempt in attempts if not attempt.refused]
    assert judged and refused and all(attempt.wait < 20.0 for attempt in judged[:-1])
    assert check.attempt("a", TOKEN, TOKEN).refused  # not even a right token jumps the line
    assert all(not attempt.ok and attempt.wait >= 20.0 for attempt in refused)
    assert check.delay(100) == MAX_DELAY
    for client in range(100):
        check.attempt(f"10.0.0.{client}", WRONG, TOKEN)
    assert check.remembered() == 8


def test_a_hundred_wrong_tokens_at_once_are_answered_in_line_and_a_right_one_elsewhere_at_once(sqlite_url, databases):
    pause(databases.of(sqlite_url), "bing", "n1", score=30, band="critical", reasons=[])
    check = TokenCheck(first_delay=0.01, max_delay=0.02, max_line=30.0)  # the real rule, with short slow-downs
    path = "/api/engines/bing/resume?node=n1"

    async def burst(base: str):
        guesser = httpx.AsyncClient(base_url=base, limits=httpx.Limits(max_connections=200), timeout=60)
        elsewhere = httpx.AsyncClient(  # another client: its own loopback address
            base_url=base, transport=httpx.AsyncHTTPTransport(local_address="127.0.0.2"), timeout=60
        )
        started = time.monotonic()

        async def post(client: httpx.AsyncClient, token: str) -> tuple[int, float]:
            answer = await client.post(path, headers={"Authorization": f"Bearer {token}"})
            return answer.status_code, time.monotonic() - started

        async with guesser, elsewhere:
            wrong = [asyncio.create_task(post(guesser, WRONG)) for _ in range(100)]
            while check.line("127.0.0.1")[0] < 100:  # until every guess is in line
                await asyncio.sleep(0.01)
            ahead = check.line("127.0.0.1")[1]
            sent = time.monotonic() - started
            right_elsewhere = await post(elsewhere, TOKEN)
            right_here = await post(guesser, TOKEN)
            return await asyncio.gather(*wrong), (sent, ahead), right_elsewhere, right_here

    with serving(sqlite_url, admin_token=TOKEN) as app:
        app.server.config.app.state.token_check = check
        wrong, (sent, ahead), right_elsewhere, right_here = asyncio.run(burst(app.url))

    assert [status for status, _ in wrong] == [401] * 100
    answered = sorted(at for _, at in wrong)
    due = list(itertools.accumulate(check.delay(n) for n in range(1, 101)))
    assert all(at >= least for at, least in zip(answered, due, strict=True))  # the n-th after n slow-downs
    assert answered[-1] >= due[-1] > 1.9  # together as slow as one after another (not all within one slow-down)
    status, at = right_elsewhere
    assert ahead > 0.5 and status == 200
    assert at - sent < ahead / 2 and at < answered[-1]  # not held up by the line of guesses still ahead
    assert read_status(databases.of(sqlite_url), "bing", "n1").state == "running"
    status, at = right_here
    assert status == 409 and at >= due[-1]  # past the check (already resumed), after the guesses ahead of it
