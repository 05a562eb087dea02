"""TopicSchedule: staggering, popping, rearming, reconciling, with a fake clock and a seeded RNG."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from topicstreams.crawl.topic_schedule import TopicSchedule


class FakeClock:
    """A clock that only moves when told to."""

    def __init__(self, now: float = 100.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


def make(clock: FakeClock, interval: float = 10.0, jitter: float = 0.0, seed: int = 1) -> TopicSchedule:
    return TopicSchedule(interval, jitter, clock=clock, rng=random.Random(seed))


def drain(schedule: TopicSchedule) -> list[tuple[str, float]]:
    """Pop everything due now."""
    out = []
    while (item := schedule.pop_due()) is not None:
        out.append(item)
    return out


# -- construction -----------------------------------------------------------------------------


@pytest.mark.parametrize("interval", [0, -1.0, float("inf"), float("nan")])
def test_bad_interval_raises(interval):
    with pytest.raises(ValueError, match="interval"):
        TopicSchedule(interval)


@pytest.mark.parametrize("jitter", [-0.1, 1.5, float("nan")])
def test_bad_jitter_ratio_raises(jitter):
    with pytest.raises(ValueError, match="jitter_ratio"):
        TopicSchedule(10, jitter)


def test_bounds_are_accepted():
    assert TopicSchedule(0.001, 0.0).jitter_ratio == 0.0
    assert TopicSchedule(5, 1).jitter_ratio == 1.0


def test_empty_schedule(clock):
    s = make(clock)
    assert len(s) == 0 and s.topics == []
    assert s.next_due() is None and s.pop_due() is None
    assert s.next_reconcile is None and s.reconcile_due()


# -- stagger / add_now ------------------------------------------------------------------------


def test_stagger_spreads_evenly_over_one_interval(clock):
    s = make(clock)
    assert s.stagger(["a", "b", "c", "b", "d", "e"]) == ["a", "b", "c", "d", "e"]
    assert [s.due_time(t) for t in "abcde"] == [100.0, 102.0, 104.0, 106.0, 108.0]
    assert s.topics == ["a", "b", "c", "d", "e"]
    assert len(s) == 5 and "c" in s and "z" not in s and 42 not in s
    assert s.next_reconcile == 110.0


def test_stagger_leaves_scheduled_topics(clock):
    s = make(clock)
    s.stagger(["a", "b"])
    clock.advance(3)
    assert s.stagger(["b", "x", "a", "y"]) == ["x", "y"]
    assert s.due_time("a") == 100.0 and s.due_time("b") == 105.0
    assert s.due_time("x") == 103.0 and s.due_time("y") == 108.0
    assert len(s) == 4


def test_add_now_keeps_insertion_order(clock):
    s = make(clock)
    assert s.add_now(["m", "c", "x", "c", "a"]) == ["m", "c", "x", "a"]
    assert s.add_now(["a", "z"]) == ["z"]
    assert s.next_reconcile is None
    assert drain(s) == [("m", 100.0), ("c", 100.0), ("x", 100.0), ("a", 100.0), ("z", 100.0)]


# -- pop_due / rearm / put_back ---------------------------------------------------------------


def test_pop_due_waits_then_returns_earliest(clock):
    s = make(clock)
    s.stagger(["a", "b"])  # a at 100, b at 105
    assert s.pop_due() == ("a", 100.0)
    assert s.pop_due() is None
    assert s.next_due() == 105.0
    clock.advance(4.9)
    assert s.pop_due() is None
    clock.advance(0.1)
    assert s.pop_due() == ("b", 105.0)
    assert s.pop_due() is None and s.next_due() is None


def test_popped_topic_is_in_flight(clock):
    s = make(clock)
    s.add_now(["a"])
    s.pop_due()
    assert "a" not in s and len(s) == 0 and s.due_time("a") is None
    assert s.stagger(["a"]) == [] and s.add_now(["a"]) == []
    assert len(s) == 0


def test_rearm_without_jitter_is_exactly_one_interval(clock):
    s = make(clock)
    s.add_now(["a"])
    s.pop_due()
    clock.advance(2.5)
    assert s.rearm("a") == 112.5
    assert s.due_time("a") == 112.5 and s.topics == ["a"]


def test_rearm_jitter_bounds_and_mean(clock):
    s = make(clock, interval=10.0, jitter=0.4, seed=7)
    s.add_now(["a"])
    delays = []
    for _ in range(2000):
        clock.advance(100)
        topic, _ = s.pop_due()
        delays.append(s.rearm(topic) - clock.now)
    assert all(8.0 <= d <= 12.0 for d in delays)
    assert min(delays) < 8.1 and max(delays) > 11.9
    assert sum(delays) / len(delays) == pytest.approx(10.0, abs=0.05)


def test_rearm_scaled_for_a_slowed_engine_stretches_the_interval_and_its_jitter(clock):
    s = make(clock, interval=10.0, jitter=0.4, seed=7)
    s.add_now(["a"])
    delays = []
    for _ in range(500):
        clock.advance(100)
        topic, _ = s.pop_due()
        delays.append(s.rearm(topic, 2.0) - clock.now)
    assert all(16.0 <= d <= 24.0 for d in delays)
    assert sum(delays) / len(delays) == pytest.approx(20.0, abs=0.2)


def test_rearm_of_scheduled_topic_moves_it_without_duplicate(clock):
    s = make(clock)
    s.stagger(["a", "b"])
    assert s.rearm("b") == 110.0
    assert s.topics == ["a", "b"] and len(s) == 2
    clock.advance(20)
    assert drain(s) == [("a", 100.0), ("b", 110.0)]


def test_rearm_unknown_topic_does_nothing(clock):
    s = make(clock)
    assert s.rearm("ghost") is None
    s.put_back("ghost", 1.0)
    assert len(s) == 0 and s.pop_due() is None


def test_put_back_keeps_old_due_time_so_failed_topic_goes_first(clock):
    s = make(clock)
    s.stagger(["a", "b", "c", "d", "e"])  # 100, 102, ..., 108
    clock.advance(8)
    topic, due = s.pop_due()
    assert (topic, due) == ("a", 100.0)
    s.put_back(topic, due)
    assert s.topics == ["a", "b", "c", "d", "e"]
    assert [t for t, _ in drain(s)] == ["a", "b", "c", "d", "e"]


# -- reconcile ------------------------------------------------------------------------------


def test_reconcile_adds_new_topics_staggered_over_next_interval(clock):
    s = make(clock)
    s.stagger(["a"])
    clock.advance(10)
    assert s.reconcile(["a", "n1", "n2", "n1", "n3", "n4"]) == (["n1", "n2", "n3", "n4"], [])
    assert [s.due_time(t) for t in ["n1", "n2", "n3", "n4"]] == [110.0, 112.5, 115.0, 117.5]
    assert s.due_time("a") == 100.0
    assert s.next_reconcile == 120.0


def test_reconcile_drops_removed_topics_lazily(clock):
    s = make(clock)
    s.stagger(["a", "b", "c", "d", "e"])
    assert s.reconcile(["a", "c", "e"]) == ([], ["b", "d"])
    assert "b" not in s and "d" not in s and len(s) == 3
    assert s.topics == ["a", "c", "e"] and s.due_time("b") is None
    assert len(s._heap) == 5  # still there, discarded only when they surface
    clock.advance(50)
    assert [t for t, _ in drain(s)] == ["a", "c", "e"]
    assert s._heap == []


def test_next_due_skips_dropped_top(clock):
    s = make(clock)
    s.stagger(["a", "b"])  # 100, 105
    s.remove("a")
    assert s.next_due() == 105.0
    assert s.pop_due() is None


def test_reconcile_undrops_reactivated_topic_without_duplicate(clock):
    s = make(clock)
    s.stagger(["a", "b"])  # 100, 105
    assert s.reconcile(["a"]) == ([], ["b"])
    clock.advance(1)
    assert s.reconcile(["a", "b"]) == ([], [])
    assert s.due_time("b") == 105.0 and len(s) == 2 and len(s._heap) == 2
    clock.advance(20)
    assert drain(s) == [("a", 100.0), ("b", 105.0)]


def test_readded_after_dropped_entry_surfaced_is_new(clock):
    s = make(clock)
    s.stagger(["a", "b"])
    s.remove("a")
    assert s.next_due() == 105.0  # a's entry discarded
    clock.advance(10)
    assert s.reconcile(["a", "b"]) == (["a"], [])
    assert s.due_time("a") == 110.0


def test_reconcile_leaves_in_flight_topic_alone(clock):
    s = make(clock)
    s.add_now(["a", "b"])
    assert s.pop_due() == ("a", 100.0)
    assert s.reconcile(["a", "b"]) == ([], [])
    assert "a" not in s and len(s) == 1
    clock.advance(1)
    assert s.rearm("a") == 111.0
    assert s.topics == ["b", "a"] and len(s._heap) == 2


def test_topic_dropped_while_in_flight_never_comes_back(clock):
    s = make(clock)
    s.add_now(["a", "b"])
    topic, due = s.pop_due()
    assert s.reconcile(["b"]) == ([], ["a"])
    assert s.reconcile(["b"]) == ([], [])  # not reported twice
    assert s.rearm(topic) is None
    assert "a" not in s and s.topics == ["b"]
    s.put_back(topic, due)
    clock.advance(100)
    assert drain(s) == [("b", 100.0)]


def test_put_back_of_topic_dropped_while_in_flight_is_ignored(clock):
    s = make(clock)
    s.add_now(["a"])
    topic, due = s.pop_due()
    s.remove(topic)
    s.put_back(topic, due)
    assert len(s) == 0 and s.pop_due() is None


def test_topic_dropped_then_reactivated_while_in_flight(clock):
    s = make(clock)
    s.add_now(["a"])
    s.pop_due()
    s.reconcile([])
    assert s.reconcile(["a"]) == ([], [])  # un-dropped, still in flight
    assert s.rearm("a") == 110.0 and s.topics == ["a"]


def test_reconcile_due_timing(clock):
    s = make(clock)
    assert s.reconcile_due()
    s.stagger(["a"])
    assert s.next_reconcile == 110.0 and not s.reconcile_due()
    clock.advance(9.99)
    assert not s.reconcile_due()
    clock.advance(0.01)
    assert s.reconcile_due()
    clock.advance(5)
    s.reconcile(["a"])
    assert s.next_reconcile == 125.0 and not s.reconcile_due()


# -- simulations ----------------------------------------------------------------------------


def test_simulation_each_topic_about_once_per_interval():
    clock = FakeClock(0.0)
    s = make(clock, interval=10.0, jitter=0.2, seed=3)
    s.stagger([f"t{i}" for i in range(5)])
    counts = Counter()
    while clock.now < 100:
        while (item := s.pop_due()) is not None:
            counts[item[0]] += 1
            s.rearm(item[0])
        clock.advance(0.1)
    assert sorted(counts) == [f"t{i}" for i in range(5)]
    assert all(9 <= n <= 11 for n in counts.values()), counts
    assert len(s) == 5


def test_simulation_floor_limits_throughput_without_starvation():
    clock = FakeClock(0.0)
    s = make(clock, interval=10.0, jitter=0.2, seed=5)
    topics = [f"t{i:02d}" for i in range(50)]
    s.stagger(topics)
    first_scrape: dict[str, float] = {}
    scrapes: list[float] = []
    while clock.now < 200:
        item = s.pop_due()
        if item is None:
            clock.advance(0.1)
            continue
        topic, due = item
        # fair: nothing still scheduled was due before the one served
        assert all(due <= s.due_time(t) for t in s.topics)
        first_scrape.setdefault(topic, clock.now)
        scrapes.append(clock.now)
        clock.advance(1.0)  # the scrape takes one second
        s.rearm(topic)
    assert set(first_scrape) == set(topics)
    assert max(first_scrape.values()) < 60
    assert sorted(first_scrape, key=first_scrape.get) == topics  # first round served in due order
    assert max(sum(1 for t in scrapes if start <= t < start + 10) for start in range(190)) <= 10
    assert len(s) == 50


def test_simulation_floor_round_robin_without_jitter():
    clock = FakeClock(0.0)
    s = make(clock, interval=10.0)
    topics = [f"t{i:02d}" for i in range(50)]
    s.stagger(topics)
    order = []
    while len(order) < 150:
        item = s.pop_due()
        if item is None:
            clock.advance(s.next_due() - clock.now)
            continue
        order.append(item[0])
        clock.advance(1.0)
        s.rearm(item[0])
    assert order == topics * 3


def test_a_topic_put_back_with_its_due_time_goes_before_those_due_with_it():
    clock = FakeClock()
    schedule = TopicSchedule(10, clock=clock)
    schedule.add_now(["a", "b", "c"])
    topic, due = schedule.pop_due()
    assert topic == "a"
    schedule.put_back("a", due)
    assert schedule.topics == ["a", "b", "c"]
    assert schedule.pop_due() == ("a", due)
