"""Lease mode's next slot (:func:`topicstreams.storage.leases.next_slot`), pure arithmetic: anchored to the slot,
missed slots skipped (never a burst), the jitter within ±ratio/2 of an interval, never before the scrape.

Properties are checked with hypothesis over slots, scrape times (early, on time, late by many intervals), intervals
and jitter ratios; the examples pin the cases an operator would reason about."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from topicstreams.storage.leases import next_slot

T0 = datetime(2030, 1, 1, tzinfo=UTC)
MICRO = timedelta(microseconds=1)


class Lowest(random.Random):
    """A generator whose ``uniform`` always gives the low end: the earliest jitter (a real Random otherwise)."""

    def uniform(self, a: float, b: float) -> float:
        return a


class Highest(random.Random):
    """A generator whose ``uniform`` always gives the high end: the latest jitter."""

    def uniform(self, a: float, b: float) -> float:
        return b


def test_on_time_the_next_slot_is_one_interval_on():
    slot, due = next_slot(T0, T0 + timedelta(seconds=3), 60)
    assert (slot, due) == (T0 + timedelta(seconds=60), T0 + timedelta(seconds=60))


def test_anchored_to_the_slot_not_to_the_scrape():
    # scraped 40 s into a 60 s interval: the rhythm keeps its phase (next slot at +60, not at +100)
    slot, due = next_slot(T0, T0 + timedelta(seconds=40), 60)
    assert slot == due == T0 + timedelta(seconds=60)


def test_missed_slots_are_skipped_not_made_up():
    # scraped 5.5 intervals late: the slots at +60 … +300 are gone; the next is the first after the scrape
    slot, due = next_slot(T0, T0 + timedelta(seconds=330), 60)
    assert slot == due == T0 + timedelta(seconds=360)


def test_a_scrape_exactly_on_a_later_slot_goes_to_the_one_after():
    slot, _ = next_slot(T0, T0 + timedelta(seconds=120), 60)
    assert slot == T0 + timedelta(seconds=180)


def test_a_scrape_before_its_slot_goes_to_the_next_slot():
    # due early by the jitter, scraped before the slot it belongs to: the next slot is one interval after that slot
    slot, due = next_slot(T0, T0 - timedelta(seconds=7), 60)
    assert slot == due == T0 + timedelta(seconds=60)


def test_the_jitter_moves_the_due_time_by_at_most_half_the_ratio():
    slot, late = next_slot(T0, T0 + timedelta(seconds=1), 100, 0.5, Highest())
    assert (slot, late) == (T0 + timedelta(seconds=100), T0 + timedelta(seconds=125))
    slot, early = next_slot(T0, T0 + timedelta(seconds=1), 100, 0.5, Lowest())
    assert (slot, early) == (T0 + timedelta(seconds=100), T0 + timedelta(seconds=75))


def test_jitter_comes_from_the_given_generator():
    one = next_slot(T0, T0, 100, 0.4, random.Random(7))
    assert one == next_slot(T0, T0, 100, 0.4, random.Random(7))
    dues = {next_slot(T0, T0, 100, 0.4, random.Random(seed))[1] for seed in range(20)}
    assert len(dues) > 1  # it does vary


def test_a_late_scrape_just_before_the_next_slot_is_not_scraped_again_at_once():
    """Scraped 90 s late in a 100 s interval, with the earliest jitter (-25 s): slot +100's due time (+75) has
    passed, so that slot is missed too. Clamping its due time to the scrape (+90) would hand the topic out again
    at once — two scrapes back to back, the burst that skipping missed slots is there to prevent."""
    now = T0 + timedelta(seconds=90)
    slot, due = next_slot(T0, now, 100, 0.5, Lowest())
    assert due > now
    assert due - slot == timedelta(seconds=-25)  # the jitter kept, not clamped away
    assert slot == T0 + timedelta(seconds=200)


moments = st.integers(-(10**6), 10**6).map(lambda ms: T0 + timedelta(milliseconds=ms))


@settings(max_examples=300, deadline=None)
@given(
    slot_at=moments,
    lateness=st.integers(-2 * 10**5, 5 * 10**7),
    interval=st.floats(0.001, 86400, allow_nan=False, allow_infinity=False),
    ratio=st.sampled_from([0.0, 0.1, 0.25, 0.5, 1.0]),
    seed=st.integers(0, 2**32),
)
@example(slot_at=T0, lateness=90_000, interval=100.0, ratio=1.0, seed=1)
def test_next_slot_properties(slot_at, lateness, interval, ratio, seed):
    now = slot_at + timedelta(milliseconds=lateness)
    step = timedelta(seconds=interval)
    slot, due = next_slot(slot_at, now, interval, ratio, random.Random(seed))
    # anchored: a whole, positive number of intervals after the slot
    assert slot > slot_at and (slot - slot_at) % step == timedelta(0)
    # the first slot after the scrape (or the one after the slot, when scraped before it), or the one after that
    # when that slot's due time has passed already: no slot made up, none skipped that was still to come
    assert slot > now
    previous = slot - step
    assert previous == slot_at or previous <= now or previous + (due - slot) <= now
    # never a burst, never a gap: due no later than one interval and half the jitter after the scrape (or after
    # the slot, for a scrape before it), and not before the scrape
    assert now <= due <= max(now, slot_at) + step + step * (ratio / 2) + MICRO
    # within the jitter around the slot (a due time moved to the scrape would be a back-to-back scrape)
    assert abs(due - slot) <= step * (ratio / 2) + MICRO
    assert due > now


@settings(max_examples=100, deadline=None)
@given(
    interval=st.floats(1, 3600),
    slots=st.integers(1, 50),
    ratio=st.sampled_from([0.0, 0.25, 0.5]),
    seed=st.integers(0, 2**32),
)
def test_a_topic_scraped_at_each_due_time_keeps_one_scrape_per_slot(interval, slots, ratio, seed):
    """Followed over many slots, scraped whenever due: one scrape per slot, every slot, the phase kept."""
    rng = random.Random(seed)
    step = timedelta(seconds=interval)
    slot, due = T0, T0
    for n in range(1, slots + 1):
        slot, due = next_slot(slot, due, interval, ratio, rng)
        assert slot == T0 + step * n


@pytest.mark.parametrize("late_intervals", [1, 3, 1000])
def test_however_late_the_next_due_time_is_within_one_interval(late_intervals):
    now = T0 + timedelta(seconds=60 * late_intervals + 1)
    slot, due = next_slot(T0, now, 60, 0.25, random.Random(3))
    assert slot > now
    assert due - now <= timedelta(seconds=60 * 1.125)
