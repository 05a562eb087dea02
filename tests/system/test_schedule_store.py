"""Lease mode's shared schedule (:mod:`topicstreams.storage.leases`) on the suite's real PostgreSQL server:
reconcile, claim (``FOR UPDATE SKIP LOCKED``), rearm and release guarded by the claim's token, extend, and the
reads (``next_due``, ``carriers``, ``leases``).

Each test gets a fresh database at the newest migration. Times are the caller's clock (``now=``, as the cluster
benchmark passes them) so that what is due and what has expired is exact; the concurrent tests run threads, each
with its own engine (:func:`topicstreams.storage.db.make_database`) and so its own connection, released together."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import Engine, text

from tests.support.databases import database_fixture
from tests.support.schedule_rows import rows, set_due
from topicstreams.storage import add_topics, set_active
from topicstreams.storage import leases as shared
from topicstreams.storage.db import make_database

psycopg = pytest.importorskip("psycopg", reason="psycopg 3 is not installed (pip install 'topicstreams[postgresql]')")

T0 = datetime(2030, 1, 1, 12, 0, tzinfo=UTC)
INTERVAL = 600.0
LEASE = 60.0


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


db = database_fixture("pg_url")


@pytest.fixture
def engines(pg_url: str):
    """Makes engines of their own (one connection pool each), disposed after the test."""
    made: list[Engine] = []

    def make() -> Engine:
        made.append(make_database(pg_url))
        return made[-1]

    yield make
    for each in made:
        each.dispose()


def scheduled(db: Engine, names: list[str], *, engine: str = "google", due: datetime = T0) -> None:
    """``names`` on the topics table and in the engine's schedule, all due by ``due`` (reconciled an interval
    before), in the order given (each a second after the one before)."""
    add_topics(db, names)
    shared.reconcile(db, engine, INTERVAL, now=due - timedelta(seconds=2 * INTERVAL))
    set_due(db, {name: due - timedelta(seconds=len(names) - i) for i, name in enumerate(names)}, engine)


def together(count: int, work: Callable[[int], object]) -> list:
    """Run ``work(i)`` in ``count`` threads released at the same moment; their results, or the first error."""
    barrier = threading.Barrier(count)
    results: list = [None] * count
    errors: list[BaseException] = []

    def run(i: int) -> None:
        try:
            barrier.wait(timeout=60)
            results[i] = work(i)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(thread.is_alive() for thread in threads), "a thread hung (waiting on a lock?)"
    if errors:
        raise errors[0]
    return results


# ==== reconcile ================================================================================================


def test_reconcile_adds_every_active_topic_once_spread_over_one_interval(db, engines):
    names = [f"topic {i}" for i in range(50)]
    add_topics(db, names)
    assert shared.reconcile(engines(), "google", INTERVAL, now=T0) == (50, 0)
    assert shared.reconcile(engines(), "google", INTERVAL, now=at(5)) == (0, 0)  # another node: nothing to do
    found = rows(db)
    assert sorted(found) == sorted(names)
    slots = sorted(row["slot_at"] for row in found.values())
    assert all(row["due_at"] == row["slot_at"] for row in found.values())
    assert slots[0] >= T0 and slots[-1] <= at(INTERVAL)  # within one interval of the reconcile
    assert slots[-1] - slots[0] > timedelta(seconds=INTERVAL / 2)  # spread, not a burst at one moment
    assert len(set(slots)) == 50
    assert all(row["lease_token"] is None and row["scrapes"] == 0 for row in found.values())


def test_each_engine_has_its_own_rows(db):
    add_topics(db, ["alpha", "beta"])
    assert shared.reconcile(db, "google", INTERVAL, now=T0) == (2, 0)
    assert shared.reconcile(db, "bing", INTERVAL, now=T0) == (2, 0)
    assert sorted(rows(db, "google")) == sorted(rows(db, "bing")) == ["alpha", "beta"]


def test_reconcile_takes_an_integer_interval(db):
    add_topics(db, ["alpha"])
    assert shared.reconcile(db, "google", 60, now=T0) == (1, 0)
    assert T0 <= rows(db)["alpha"]["slot_at"] <= at(60)


def test_concurrent_reconciles_add_each_row_once(db, engines):
    """Two nodes reconciling at the same moment, round after round as topics arrive: every row added exactly once,
    the counts of the two adding up, and no deadlock."""
    handles = [engines(), engines()]
    total = 0
    for round_ in range(6):
        add_topics(db, [f"round {round_} topic {i}" for i in range(40)])
        added = together(2, lambda i: shared.reconcile(handles[i], "google", INTERVAL, now=T0))
        assert sum(each[0] for each in added) == 40, added
        total += 40
        assert len(rows(db)) == total
    with db.connect() as conn:
        assert (
            conn.scalar(
                text(
                    "SELECT count(*) FROM (SELECT engine, topic_id FROM schedule "
                    "GROUP BY engine, topic_id HAVING count(*) > 1) twice"
                )
            )
            == 0
        )


def test_a_deactivated_topic_is_never_claimed_and_its_free_row_goes(db):
    scheduled(db, ["alpha", "beta", "gamma"])
    set_active(db, ["beta"], False)
    # before any reconcile: claims and next_due join the active topics
    claimed = shared.claim(db, "google", "n1", LEASE, limit=10, now=at(3600))
    assert sorted(c.topic for c in claimed) == ["alpha", "gamma"]
    shared.release(db, "google", claimed)
    set_due(db, {"alpha": at(50), "gamma": at(60), "beta": at(10)})
    assert shared.next_due(db, "google") == at(50)
    assert shared.reconcile(db, "google", INTERVAL, now=T0) == (0, 1)
    assert sorted(rows(db)) == ["alpha", "gamma"]
    assert shared.reconcile(db, "google", INTERVAL, now=T0) == (0, 0)


def test_a_held_row_of_a_deactivated_topic_stays_until_given_back(db):
    scheduled(db, ["alpha"])
    [claim] = shared.claim(db, "google", "n1", LEASE, now=T0)
    set_active(db, ["alpha"], False)
    assert shared.reconcile(db, "google", INTERVAL, now=T0) == (0, 0)  # its node is on it: not pulled away
    assert shared.rearm(db, "google", "n1", [shared.Rearm(claim, at(INTERVAL), at(INTERVAL))], now=at(5)) == {
        claim.topic_id
    }
    assert shared.reconcile(db, "google", INTERVAL, now=at(6)) == (0, 1)
    assert rows(db) == {}


def test_a_deactivated_topic_whose_lease_expired_is_removed(db):
    """Its node died holding it: the lease expired, no one holds the row (claims skip inactive topics, so no one
    ever will). "Rows of deactivated topics that no one holds are deleted" — this one too."""
    scheduled(db, ["alpha", "beta"])
    claims = shared.claim(db, "google", "dead-node", LEASE, limit=2, now=T0)
    assert len(claims) == 2
    set_active(db, ["alpha"], False)
    assert shared.reconcile(db, "google", INTERVAL, now=at(LEASE + 1)) == (0, 1)
    assert sorted(rows(db)) == ["beta"]


def test_a_reactivated_topic_comes_back(db):
    scheduled(db, ["alpha", "beta"])
    set_active(db, ["alpha"], False)
    assert shared.reconcile(db, "google", INTERVAL, now=T0) == (0, 1)
    add_topics(db, ["alpha"])  # re-activates it
    assert shared.reconcile(db, "google", INTERVAL, now=at(100)) == (1, 0)
    row = rows(db)["alpha"]
    assert at(100) <= row["slot_at"] <= at(100 + INTERVAL) and row["lease_token"] is None
    claimed = shared.claim(db, "google", "n1", LEASE, limit=5, now=at(100 + INTERVAL))
    assert sorted(c.topic for c in claimed) == ["alpha", "beta"]


# ==== claim ====================================================================================================


def test_claim_takes_the_oldest_due_first_up_to_the_limit(db):
    names = ["a", "b", "c", "d", "e"]
    scheduled(db, names)
    set_due(db, {"a": at(-10), "b": at(-50), "c": at(-30), "d": at(-40), "e": at(100)})
    claims = shared.claim(db, "google", "n1", LEASE, limit=3, now=T0)
    assert [c.topic for c in claims] == ["b", "d", "c"]
    assert len({c.token for c in claims}) == 1 and all(c.due_at <= T0 for c in claims)
    assert [c.due_at for c in claims] == [at(-50), at(-40), at(-30)]
    held = rows(db)
    for name in ("b", "d", "c"):
        assert (held[name]["lease_node"], held[name]["lease_token"], held[name]["lease_until"]) == (
            "n1",
            claims[0].token,
            at(LEASE),
        )
    assert [c.topic for c in shared.claim(db, "google", "n2", LEASE, limit=3, now=T0)] == ["a"]  # e is not due
    assert shared.claim(db, "google", "n2", LEASE, limit=3, now=T0) == []


def test_claim_default_limit_is_one_and_other_engines_are_left_alone(db):
    scheduled(db, ["a", "b"])
    scheduled(db, ["a", "b"], engine="bing")
    assert len(shared.claim(db, "google", "n1", LEASE, now=T0)) == 1
    assert len(shared.claim(db, "bing", "n1", LEASE, limit=5, now=T0)) == 2
    assert len(shared.claim(db, "google", "n1", LEASE, limit=5, now=T0)) == 1


def test_many_nodes_claiming_at_once_get_disjoint_due_rows(db, engines):
    """Eight nodes, each its own connection, claiming three at a time until nothing is due: every due row goes
    to exactly one of them, no row not due is taken, no claim exceeds its limit."""
    names = [f"topic {i:02d}" for i in range(60)]
    scheduled(db, names)
    not_due = set(names[::3])
    set_due(db, {name: at(INTERVAL) for name in not_due})
    handles = [engines() for _ in range(8)]

    def claim_until_empty(i: int) -> list[list[shared.Claim]]:
        taken = []
        while claims := shared.claim(handles[i], "google", f"node-{i}", LEASE, limit=3, now=T0):
            taken.append(claims)
        return taken

    batches = [batch for node in together(8, claim_until_empty) for batch in node]
    assert all(1 <= len(batch) <= 3 for batch in batches)
    claimed = Counter(claim.topic for batch in batches for claim in batch)
    assert set(claimed) == set(names) - not_due
    assert max(claimed.values()) == 1
    held = rows(db)
    tokens = {claim.topic: claim.token for batch in batches for claim in batch}
    assert all(held[name]["lease_token"] == tokens[name] for name in tokens)
    assert all(held[name]["lease_token"] is None for name in not_due)


def test_a_claim_skips_rows_another_is_taking_instead_of_waiting(db, engines):
    """A node's claim in progress (its transaction holds the two oldest rows): another node's claim does not wait
    for it, it takes the next rows."""
    scheduled(db, ["a", "b", "c", "d"])
    slow = engines()
    with slow.connect() as conn:
        trans = conn.begin()
        locked = (
            conn.execute(
                text("""
            SELECT t.name FROM schedule s JOIN topics t ON t.id = s.topic_id
            WHERE s.engine = 'google' ORDER BY s.due_at LIMIT 2 FOR UPDATE OF s""")
            )
            .scalars()
            .all()
        )
        assert locked == ["a", "b"]
        [claims] = together(1, lambda i: shared.claim(engines(), "google", "n2", LEASE, limit=2, now=T0))
        assert [c.topic for c in claims] == ["c", "d"]
        trans.rollback()
    assert [c.topic for c in shared.claim(db, "google", "n1", LEASE, limit=5, now=T0)] == ["a", "b"]


def test_an_expired_lease_is_claimable_again_a_live_one_is_not(db):
    scheduled(db, ["alpha"])
    [first] = shared.claim(db, "google", "n1", LEASE, now=T0)
    assert shared.claim(db, "google", "n2", LEASE, now=at(LEASE - 1)) == []
    [second] = shared.claim(db, "google", "n2", LEASE, now=at(LEASE))
    assert second.topic == "alpha" and second.token != first.token
    assert second.slot_at == first.slot_at and second.due_at == first.due_at  # the same slot, still to be done
    assert rows(db)["alpha"]["lease_node"] == "n2"


def test_next_due_is_the_earliest_free_row_or_lease_expiry(db):
    assert shared.next_due(db, "google") is None
    scheduled(db, ["a", "b"])
    set_due(db, {"a": at(-5), "b": at(30)})
    assert shared.next_due(db, "google") == at(-5)
    shared.claim(db, "google", "n1", LEASE, now=T0)  # a: held until T0 + LEASE
    assert shared.next_due(db, "google") == at(30)
    set_due(db, {"b": at(3 * LEASE)})
    assert shared.next_due(db, "google") == at(LEASE)  # a's lease may expire first
    assert shared.next_due(db, "bing") is None


# ==== rearm, release, extend ===================================================================================


def test_the_owner_rearms_its_claim(db):
    scheduled(db, ["alpha", "beta"])
    [claim] = shared.claim(db, "google", "n1", LEASE, now=T0)
    slot, due = shared.next_slot(claim.slot_at, at(20), INTERVAL)
    assert shared.rearm(db, "google", "n1", [shared.Rearm(claim, slot, due)], now=at(20)) == {claim.topic_id}
    row = rows(db)[claim.topic]
    assert (row["slot_at"], row["due_at"]) == (slot, due)
    assert row["lease_node"] is None and row["lease_token"] is None and row["lease_until"] is None
    assert (row["last_done_at"], row["last_node"], row["scrapes"]) == (at(20), "n1", 1)
    assert rows(db)["beta"]["scrapes"] == 0
    # the same claim cannot re-arm twice (its token is gone with the lease)
    assert shared.rearm(db, "google", "n1", [shared.Rearm(claim, slot, due)], now=at(21)) == set()
    assert rows(db)[claim.topic]["scrapes"] == 1
    assert shared.rearm(db, "google", "n1", []) == set()


def test_an_expired_and_taken_lease_leaves_its_old_owner_nothing(db):
    scheduled(db, ["alpha"])
    [old] = shared.claim(db, "google", "n1", LEASE, now=T0)
    [new] = shared.claim(db, "google", "n2", LEASE, now=at(LEASE + 1))
    late = shared.Rearm(old, at(INTERVAL), at(INTERVAL))
    assert shared.rearm(db, "google", "n1", [late], now=at(LEASE + 2)) == set()
    assert shared.release(db, "google", [old]) == set()
    assert shared.release(db, "google", [old], due_at=at(9999)) == set()
    assert shared.extend(db, [old.token], LEASE, now=at(LEASE + 3)) == set()
    assert shared.release_tokens(db, [old.token]) == 0
    row = rows(db)["alpha"]
    assert (row["lease_node"], row["lease_token"], row["lease_until"]) == ("n2", new.token, at(2 * LEASE + 1))
    assert (row["scrapes"], row["last_node"], row["due_at"]) == (0, None, old.due_at)
    # the new owner's work counts
    assert shared.rearm(
        db, "google", "n2", [shared.Rearm(new, at(INTERVAL), at(INTERVAL + 7))], now=at(LEASE + 30)
    ) == {new.topic_id}
    row = rows(db)["alpha"]
    assert (row["last_node"], row["scrapes"], row["due_at"], row["lease_token"]) == ("n2", 1, at(INTERVAL + 7), None)


def test_an_expired_lease_no_one_took_is_still_its_claims(db):
    scheduled(db, ["alpha"])
    [claim] = shared.claim(db, "google", "n1", LEASE, now=T0)
    assert shared.rearm(db, "google", "n1", [shared.Rearm(claim, at(INTERVAL), at(INTERVAL))], now=at(LEASE * 2)) == {
        claim.topic_id
    }


def test_release_frees_the_row_due_as_it_was_or_when_told(db):
    scheduled(db, ["a", "b"])
    [a, b] = shared.claim(db, "google", "n1", LEASE, limit=2, now=T0)
    assert shared.release(db, "google", [a]) == {a.topic_id}
    row = rows(db)["a"]
    assert row["lease_token"] is None and row["lease_node"] is None and row["due_at"] == a.due_at
    assert row["scrapes"] == 0 and row["last_node"] is None  # not a scrape
    assert [c.topic for c in shared.claim(db, "google", "n2", 1000, now=at(1))] == ["a"]  # free at once
    assert shared.release(db, "google", [b], due_at=at(300)) == {b.topic_id}
    assert rows(db)["b"]["due_at"] == at(300) and rows(db)["b"]["slot_at"] == b.slot_at
    assert shared.claim(db, "google", "n2", LEASE, now=at(299)) == []
    assert [c.topic for c in shared.claim(db, "google", "n2", LEASE, now=at(300))] == ["b"]
    assert shared.release(db, "google", []) == set()


def test_extend_keeps_a_lease_past_its_first_expiry_and_says_which_are_still_held(db):
    scheduled(db, ["a", "b"])
    [a] = shared.claim(db, "google", "n1", LEASE, now=T0)
    [b] = shared.claim(db, "google", "n1", LEASE, now=T0)
    assert a.token != b.token
    assert shared.extend(db, [a.token, b.token], LEASE, now=at(LEASE - 10)) == {a.token, b.token}
    assert rows(db)["a"]["lease_until"] == at(2 * LEASE - 10)
    assert shared.claim(db, "google", "n2", LEASE, limit=2, now=at(LEASE + 10)) == []  # past the first expiry
    # b's node stops extending it; a's goes on
    assert shared.extend(db, [a.token], LEASE, now=at(2 * LEASE - 20)) == {a.token}
    [taken] = shared.claim(db, "google", "n2", LEASE, limit=2, now=at(2 * LEASE - 5))
    assert taken.topic == "b"
    assert shared.extend(db, [a.token, b.token], LEASE, now=at(2 * LEASE)) == {a.token}
    assert shared.extend(db, [], LEASE) == set()


def test_release_tokens_gives_back_every_row_of_those_claims(db):
    scheduled(db, ["a", "b", "c", "d"])
    first = shared.claim(db, "google", "n1", LEASE, limit=3, now=T0)
    [other] = shared.claim(db, "google", "n2", LEASE, now=T0)
    assert shared.release_tokens(db, [first[0].token]) == 3
    held = rows(db)
    assert all(held[name]["lease_token"] is None for name in ("a", "b", "c"))
    assert held[other.topic]["lease_token"] == other.token
    assert shared.release_tokens(db, [first[0].token]) == 0
    assert shared.release_tokens(db, []) == 0
    assert [c.topic for c in shared.claim(db, "google", "n3", LEASE, limit=5, now=at(1))] == ["a", "b", "c"]


# ==== carriers and leases ======================================================================================


def test_carriers_counts_the_topics_each_node_rearmed_since(db):
    scheduled(db, ["a", "b", "c"])
    scheduled(db, ["a", "b", "c"], engine="bing")
    n1 = shared.claim(db, "google", "n1", LEASE, limit=2, now=T0)
    n2 = shared.claim(db, "google", "n2", LEASE, limit=2, now=T0)
    shared.rearm(db, "google", "n1", [shared.Rearm(c, at(INTERVAL), at(INTERVAL)) for c in n1], now=at(10))
    shared.rearm(db, "google", "n2", [shared.Rearm(c, at(INTERVAL), at(INTERVAL)) for c in n2], now=at(20))
    old = shared.claim(db, "bing", "n3", LEASE, limit=1, now=T0)
    shared.rearm(db, "bing", "n3", [shared.Rearm(c, at(INTERVAL), at(INTERVAL)) for c in old], now=at(-1000))
    fresh = shared.claim(db, "bing", "n1", LEASE, limit=1, now=T0)
    shared.rearm(db, "bing", "n1", [shared.Rearm(c, at(INTERVAL), at(INTERVAL)) for c in fresh], now=at(5))
    assert shared.carriers(db, T0) == {"google": {"n1": 2, "n2": 1}, "bing": {"n1": 1}}
    assert shared.carriers(db, at(15)) == {"google": {"n2": 1}}
    assert shared.carriers(db, at(-2000)) == {"google": {"n1": 2, "n2": 1}, "bing": {"n1": 1, "n3": 1}}
    assert shared.carriers(db, at(21)) == {}


def test_leases_counts_the_live_claims_per_node_and_engine(db):
    assert shared.leases(db) == {}
    add_topics(db, ["a", "b", "c"])
    with db.connect() as conn:
        server_now = conn.scalar(text("SELECT now()"))
    for engine in ("google", "bing"):
        shared.reconcile(db, engine, INTERVAL, now=server_now - timedelta(hours=3))
    shared.claim(db, "google", "n1", LEASE, limit=2)  # the server's clock: live for a minute
    shared.claim(db, "bing", "n1", LEASE, limit=1)
    shared.claim(db, "google", "n2", LEASE, limit=1)
    # a claim made an hour ago whose lease has expired counts for no one
    shared.claim(db, "bing", "gone", LEASE, limit=1, now=server_now - timedelta(hours=1))
    assert shared.leases(db) == {"n1": {"google": 2, "bing": 1}, "n2": {"google": 1}}
