"""The storage-state file of an engine's browser context: read back only when it is one, written whole and private."""

import json
import logging
import stat

from topicstreams.browser.chromium import STATE_FILE, state_path
from topicstreams.browser.provider import _cookie_keys, read_state, write_private

COOKIE = {
    "name": "SOCS",
    "value": "CAI",
    "domain": "127.0.0.1",
    "path": "/",
    "expires": 1e9,
    "httpOnly": False,
    "secure": False,
    "sameSite": "Lax",
}


def test_the_state_lives_in_the_engines_profile_folder(tmp_path):
    assert state_path(tmp_path / "node-a" / "google") == tmp_path / "node-a" / "google" / STATE_FILE


def test_no_file_yet_is_a_fresh_context_without_a_word(tmp_path, caplog):
    with caplog.at_level(logging.WARNING):
        assert read_state(tmp_path / "none.json") is None
    assert caplog.records == []


def test_a_saved_state_is_read_back_with_its_cookies_and_origins(tmp_path):
    path = tmp_path / STATE_FILE
    origins = [{"origin": "http://127.0.0.1:8000", "localStorage": [{"name": "k", "value": "v"}]}]
    path.write_text(json.dumps({"cookies": [COOKIE], "origins": origins}))
    assert read_state(path) == {"cookies": [COOKIE], "origins": origins}


def test_a_broken_or_foreign_file_starts_the_engine_fresh_and_says_which_file(tmp_path, caplog):
    broken, foreign = tmp_path / "broken.json", tmp_path / "foreign.json"
    broken.write_text('{"cookies": [')
    foreign.write_text('{"cookies": "SOCS=CAI"}')
    with caplog.at_level(logging.WARNING):
        assert read_state(broken) is None
        assert read_state(foreign) is None
    messages = [record.getMessage() for record in caplog.records]
    assert len(messages) == 2
    assert str(broken) in messages[0] and "not valid JSON" in messages[0] and "starts with no cookies" in messages[0]
    assert str(foreign) in messages[1] and "not a storage state" in messages[1]


def test_the_file_is_written_whole_and_readable_by_its_owner_only(tmp_path):
    path = tmp_path / "profiles" / "node-a" / "bing" / STATE_FILE
    write_private(path, '{"cookies": [], "origins": []}')
    write_private(path, '{"cookies": [1], "origins": []}')
    assert path.read_text() == '{"cookies": [1], "origins": []}'
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert sorted(p.name for p in path.parent.iterdir()) == [STATE_FILE]  # no temporary file left behind


def test_a_cookie_whose_expiry_moves_on_is_no_change_but_a_new_value_is():
    later = dict(COOKIE, expires=2e9)
    assert _cookie_keys([COOKIE]) == _cookie_keys([later])
    assert _cookie_keys([COOKIE]) != _cookie_keys([dict(COOKIE, value="CAE")])
    assert _cookie_keys([COOKIE]) != _cookie_keys([COOKIE, dict(COOKIE, name="NID")])
