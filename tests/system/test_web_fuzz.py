"""Fuzzing the web app: no input gives a 500.

* schemathesis generates requests from the app's own OpenAPI schema (valid ones and, in negative mode, ones that
  break it), sends them through the ASGI app and checks every answer: never a 5xx, and a 200 conforms to the schema;
* hypothesis throws arbitrary text at the search on SQLite (FTS5) and PostgreSQL (tsquery): no query syntax
  leaks through, and the two databases agree on what a search finds;
* every path (page, API, feeds) gets arbitrary parameter values: a 4xx at worst.
"""

from __future__ import annotations

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode

from tests.support.feed_data import article, client, fresh_database, store, write_rows
from topicstreams.web.app import WebSettings, create_app
from topicstreams.web.params import BadParameter, feed_filter

FUZZ = settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))

HOSTILE = [
    "<img src=x onerror=window.__x=1>",
    "</script><script>window.__x=1</script>",
    '"><svg onload=1>',
    'NEAR(a b) OR -c* "d',
    "Ünïcödé café — «quotes»",
    "\x00\x07 control \x1b[31m",
]


def fill(url: str) -> str:
    fresh_database(url)
    store(
        url,
        [
            article(
                n,
                f"topic {n % 4}",
                ("google", "bing", "yahoo", "brave")[n % 4],
                title=f"{HOSTILE[n % len(HOSTILE)]} story {n}",
                snippet=HOSTILE[(n + 1) % len(HOSTILE)],
            )
            for n in range(40)
        ],
    )
    write_rows(
        url,
        [
            {
                "news_id": "j" * 32,
                "url": "javascript:alert(1)",
                "topic": "<b>x</b>",
                "engine": "bing",
                "title": HOSTILE[1],
                "source": None,
                "snippet": None,
            }
        ],
    )
    return url


@pytest.fixture(scope="module")
def filled(tmp_path_factory) -> str:
    return fill(f"sqlite:///{tmp_path_factory.mktemp('fuzz') / 'feed.db'}")


@pytest.fixture(scope="module")
def api_schema(filled: str):
    # The ASGI transport calls itself "testserver": that name is this app's own here.
    return schemathesis.openapi.from_asgi("/api/openapi.json", create_app(WebSettings(filled, host="testserver")))


@pytest.mark.parametrize(
    ("path", "mode"),
    [
        ("/api/feed", GenerationMode.POSITIVE),
        ("/api/feed", GenerationMode.NEGATIVE),
        ("/api/topics", GenerationMode.POSITIVE),  # (no parameter to break)
        ("/api/logs", GenerationMode.POSITIVE),
        ("/api/logs", GenerationMode.NEGATIVE),
        ("/api/health", GenerationMode.POSITIVE),
    ],
)
def test_schemathesis_finds_no_server_error(api_schema, path: str, mode: GenerationMode) -> None:
    operation = api_schema[path]["GET"]
    answered: set[int] = set()

    @given(case=operation.as_strategy(generation_mode=mode))
    @FUZZ
    def check(case) -> None:
        response = case.call()
        answered.add(response.status_code)
        assert response.status_code < 500, (case.query, response.text[:500])
        if response.status_code != 200:
            assert response.json()["detail"]
        elif mode is GenerationMode.POSITIVE:
            # (Negative cases are not validated: a query string carries text only, so much that breaks the schema
            # still reaches the app as a value it may take, e.g. an unknown topic.)
            case.validate_response(response)

    check()
    assert 200 in answered if mode is GenerationMode.POSITIVE else answered - {200}


@pytest.fixture(scope="module")
def both(filled: str, request: pytest.FixtureRequest) -> dict[str, object]:
    """The same data on SQLite and on PostgreSQL (when a server can run here)."""
    readers = {"sqlite": create_app(WebSettings(filled)).state.reader}
    try:
        server = request.getfixturevalue("postgres_server")
    except pytest.skip.Exception:
        return readers
    from tests.support.databases import postgres_dbname

    name = postgres_dbname("fuzz_search")
    janitor = server.janitor(name)
    janitor.init()
    request.addfinalizer(janitor.drop)
    readers["postgresql"] = create_app(WebSettings(fill(server.url(name)))).state.reader
    return readers


WORDS = st.sampled_from(["story", "café", "CAFE", "quotes", "control", "near", "or", "img", "script", "1", "x"])
SEARCH_TEXT = st.one_of(
    st.text(max_size=60),
    st.lists(
        st.one_of(WORDS, st.sampled_from(['"', "-", "*", "OR", "NEAR(", ")", ":", "^", "+", "AND", "NOT"])), max_size=8
    ).map(" ".join),
)


@given(text=SEARCH_TEXT)
@FUZZ
def test_any_search_text_is_an_answer_or_a_clear_error_and_both_databases_agree(both, text: str) -> None:
    try:
        feed = feed_filter(q=text)
    except BadParameter as exc:
        assert exc.parameter == "q" and exc.message
        return
    found = {
        name: [(e.topic, e.news_id) for e in reader.events(feed, limit=200).items] for name, reader in both.items()
    }
    assert len({tuple(items) for items in found.values()}) == 1, found


@given(
    value=st.text(max_size=80),
    name=st.sampled_from(
        ["topic", "engine", "q", "since", "before", "after", "limit", "partial", "node", "level", "resumed"]
    ),
    path=st.sampled_from(
        [
            "/",
            "/api/feed",
            "/api/topics",
            "/feed.atom",
            "/feed.rss",
            "/feed.json",
            "/monitor",
            "/api/health",
            "/logs",
            "/api/logs",
            "/metrics",
        ]
    ),
)
@FUZZ
def test_no_parameter_value_on_any_path_is_a_server_error(filled: str, value: str, name: str, path: str) -> None:
    response = _client(filled).get(path, params={name: value})
    assert response.status_code < 500, (path, name, value, response.text[:300])


@given(
    engine=st.text(max_size=40),
    node=st.one_of(st.none(), st.text(max_size=80)),
    token=st.one_of(st.none(), st.text(max_size=40)),
    form=st.booleans(),
)
@FUZZ
def test_no_resume_request_is_a_server_error_and_none_without_the_token_resumes(
    filled: str, engine, node, token, form
) -> None:
    from urllib.parse import quote

    params = {} if node is None else {"node": node}
    path = f"/api/engines/{quote(engine, safe='')}/resume"
    if form:
        response = _resume_client(filled).post(path, params=params, data={} if token is None else {"token": token})
    else:
        headers = {} if token is None else {"Authorization": f"Bearer {token}".encode()}
        response = _resume_client(filled).post(path, params=params, headers=headers)
    assert response.status_code in (400, 401, 404, 405, 413, 422), (engine, node, token, response.text[:300])


_clients: dict[str, object] = {}

RESUME_TOKEN = "fuzz-admin-token-0123456789"


def _resume_client(url: str):
    """The app with an admin token none of the fuzzed ones is (failures in a row are not slowed down here: each
    example is a new client to the token check)."""
    from fastapi.testclient import TestClient

    from tests.support.feed_data import BASE_URL

    app = create_app(WebSettings(url, admin_token=RESUME_TOKEN))
    return TestClient(app, base_url=BASE_URL)


def _client(url: str):
    if url not in _clients:
        _clients[url] = client(url)
    return _clients[url]
