"""The rated news world: profiles given or drawn from a seed, bursts that break and fade, publication times that
invert exactly, the accounting the benchmark reads, and one engine serving it over HTTP (real server, real parser)."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime

import pytest

from fake_engines import FakeEngines, NewsWorld, RatedWorld, bing
from fake_engines.__main__ import _parser, make_world
from fake_engines.rated_world import (
    BASE_RANGE,
    FADE_RANGE,
    FADE_SPAN,
    MAX_PER_HOUR,
    PEAK_RANGE,
    SEGMENT,
    Burst,
    Profile,
    drawn_profile,
)
from fake_engines.world import EPOCH
from tests.support.fakes_http import fetch
from tests.support.parsing import parsing_reader, reading_of
from tests.unit.test_fakes_world import get, reading_url, results_url
from topicstreams import ENGINES
from topicstreams.engines.news_urls import normalize_url

ORIGIN = 1_767_225_600.0
"""2026-01-01T00:00:00Z: the frozen worlds' time (speed 0)."""
HOUR = 3600.0
TOPICS = tuple(f"topic {i}" for i in range(300))
BURST = Burst(start=ORIGIN + 2 * HOUR, peak_per_hour=100.0, fade_hours=1.0)
STORY = Profile(2.0, (BURST,))
"""Two articles an hour, then a story breaking two hours after the origin at 100 an hour, fading within the hour."""


def frozen(**kwargs) -> RatedWorld:
    return RatedWorld(speed=0, origin=ORIGIN, **kwargs)


def burst_integral(a: float, b: float) -> float:
    """The articles the burst adds in ``(a, b]`` (whole steps): the exponential's integral."""
    tau = BURST.fade_hours * HOUR
    a, b = max(a, BURST.start), min(b, BURST.end)
    if b <= a:
        return 0.0
    excess = (BURST.peak_per_hour - STORY.base_per_hour) / HOUR
    return excess * tau * (math.exp(-(a - BURST.start) / tau) - math.exp(-(b - BURST.start) / tau))


# -- determinism -------------------------------------------------------------------------------------------


def test_the_same_seed_origin_and_names_give_the_same_world_and_another_seed_another():
    one, two, other = frozen(seed=7), frozen(seed=7), frozen(seed=8)
    for topic in TOPICS[:20]:
        assert one.profile(topic) == two.profile(topic) == drawn_profile(7, topic, ORIGIN)
        assert one.topic_articles(topic) == two.topic_articles(topic)
        for engine in ENGINES:
            assert one.articles(engine, topic) == two.articles(engine, topic)
    assert one.profiles_state(TOPICS) == two.profiles_state(TOPICS) != other.profiles_state(TOPICS)
    assert [one.published("topic 3", k) for k in range(1, 50)] != [other.published("topic 3", k) for k in range(1, 50)]
    running = RatedWorld(seed=7, origin=ORIGIN)  # a running clock: the same stream at a given time
    assert running.topic_articles("topic 3", ORIGIN + 60) == one.topic_articles("topic 3", ORIGIN + 60)


def test_drawn_rates_span_one_a_day_to_one_a_minute_and_some_topics_burst():
    world = frozen(seed=7)
    profiles = [world.profile(topic) for topic in TOPICS]
    bases = [profile.base_per_hour for profile in profiles]
    assert all(BASE_RANGE[0] <= base <= BASE_RANGE[1] for base in bases)
    decades = {math.floor(math.log10(base)) for base in bases}  # log-uniform: every decade from 1/24 to 60 an hour
    assert decades == {-2, -1, 0, 1}, decades
    assert min(bases) < 1 / 12 and max(bases) > 30
    bursts = [(profile, burst) for profile in profiles for burst in profile.bursts]
    assert 0.08 * len(TOPICS) <= len(bursts) <= 0.25 * len(TOPICS)
    for profile, burst in bursts:
        assert ORIGIN <= burst.start < ORIGIN + world.horizon_hours * HOUR
        assert max(PEAK_RANGE[0], 2 * profile.base_per_hour) <= burst.peak_per_hour <= PEAK_RANGE[1]
        assert FADE_RANGE[0] <= burst.fade_hours <= FADE_RANGE[1]
    assert not any(frozen(seed=7, burst_share=0).profile(topic).bursts for topic in TOPICS)
    # the true rates, an hour after the origin, span the range too
    assert min(world.rate(topic, ORIGIN + HOUR) for topic in TOPICS) < 1 / 12
    assert max(world.rate(topic, ORIGIN + HOUR) for topic in TOPICS) > 30


# -- a burst ----------------------------------------------------------------------------------------------------


def test_a_burst_raises_the_articles_per_hour_then_fades_back_to_the_base():
    world = frozen(profiles={"story": STORY})
    counts = []
    for hour in range(-2, 10):
        a, b = ORIGIN + hour * HOUR, ORIGIN + (hour + 1) * HOUR
        expected = STORY.base_per_hour + burst_integral(a, b)
        assert world.expected("story", a, b) == pytest.approx(expected, rel=1e-9)
        published = world.published_between("story", a, b)
        assert abs(len(published) - expected) < 2, (hour, len(published), expected)
        counts.append(len(published))
    before, during, after = counts[:4], counts[4:9], counts[9:]
    assert all(count <= 3 for count in before + after)
    assert during[0] > 60 and during == sorted(during, reverse=True) and during[-1] <= 4
    assert BURST.end == BURST.start + FADE_SPAN * HOUR  # five fades, whole steps
    # the true rate: the base, then one step per SEGMENT, falling, then the base again
    assert world.rate("story", BURST.start - 1) == STORY.base_per_hour
    steps = [world.rate("story", BURST.start + i * SEGMENT + SEGMENT / 2) for i in range(BURST.steps)]
    assert steps == sorted(steps, reverse=True) and len(set(steps)) == len(steps)
    assert 90 < steps[0] < BURST.peak_per_hour and steps[-1] < STORY.base_per_hour + 1
    assert world.rate("story", BURST.start + 1) == world.rate("story", BURST.start + SEGMENT - 1) == steps[0]
    assert world.rate("story", BURST.end) == STORY.base_per_hour
    assert world.rate("story", EPOCH - 1) == 0.0
    # what one engine shows: its share of the rate, yesterday's while it is stale
    assert world.engine_rate("bing", "story", BURST.start + 1) == pytest.approx(0.75 * steps[0])
    world.set_stale("bing")
    assert world.engine_rate("bing", "story", BURST.start + 1) == pytest.approx(0.75 * STORY.base_per_hour)


def test_overlapping_bursts_add_and_a_burst_before_the_streams_begin_is_cut():
    late = Burst(BURST.start + 7 * SEGMENT / 3, 50.0, 0.5)  # its steps fall between the first burst's
    world = frozen(profiles={"two": Profile(2.0, (BURST, late)), "one": STORY, "old": Profile(1.0, (Burst(0, 9, 1),))})
    a, b = BURST.start, BURST.end + HOUR
    alone = world.expected("one", a, b)
    assert world.expected("two", a, b) > alone
    assert world.rate("two", late.start + 1) > world.rate("one", late.start + 1)
    assert len(world.published_between("two", a, b)) > len(world.published_between("one", a, b))
    assert world.rate("old", ORIGIN) == 1.0 and world.expected("old", EPOCH, EPOCH + HOUR) == pytest.approx(1.0)


# -- publication times --------------------------------------------------------------------------------------


@pytest.mark.parametrize("topic", ["story", "fastest", "topic 0", "topic 1", "topic 7"])
def test_publication_times_strictly_increase_and_latest_inverts_them(topic):
    world = frozen(seed=7, profiles={"story": STORY, "fastest": Profile(MAX_PER_HOUR)})
    newest = world.latest(topic, ORIGIN + 6 * HOUR)
    ks = range(max(1, newest - 400), newest + 400)
    times = [world.published(topic, k) for k in ks]
    assert all(earlier < later for earlier, later in zip(times, times[1:], strict=False))
    for k, published in zip(ks, times, strict=True):
        assert world.latest(topic, published) == k
        assert world.latest(topic, math.nextafter(published, -math.inf)) == k - 1
    assert world.published(topic, 1) > EPOCH and world.latest(topic, EPOCH) == 0


def test_latest_and_published_agree_at_every_step_edge():
    world = frozen(profiles={"story": STORY})
    for step in range(BURST.steps + 2):
        edge = BURST.start + step * SEGMENT
        for t in (math.nextafter(edge, -math.inf), edge, math.nextafter(edge, math.inf)):
            k = world.latest("story", t)
            assert world.published("story", k) <= t < world.published("story", k + 1)
            assert abs(k - world.expected("story", EPOCH, t)) < 1


def test_published_between_is_every_article_in_the_interval_and_matches_latest():
    world = frozen(seed=7, profiles={"story": STORY})
    for topic in ("story", "topic 0", "topic 8"):
        edges = [BURST.start - HOUR + i * 1234.5 for i in range(12)]
        joined: list[tuple[int, float]] = []
        for a, b in zip(edges, edges[1:], strict=False):
            between = world.published_between(topic, a, b)
            assert len(between) == world.latest(topic, b) - world.latest(topic, a)
            assert all(a < published <= b and world.published(topic, k) == published for k, published in between)
            assert abs(len(between) - world.expected(topic, a, b)) < 2  # one article per unit of Λ
            joined += between
        assert joined == world.published_between(topic, edges[0], edges[-1])
        assert [k for k, _ in joined] == list(range(joined[0][0], joined[0][0] + len(joined)))
    assert world.published_between("story", BURST.start, BURST.start) == []


def test_a_topic_shows_its_newest_window_with_ages_from_world_time():
    world = frozen(profiles={"story": STORY}, window=60)
    t = BURST.start + HOUR
    listed = world.topic_articles("story", t)
    newest = world.latest("story", t)
    assert [a.number for a in listed] == list(range(newest, newest - 60, -1))
    assert all(a.age_seconds == int(t - world.published("story", a.number)) for a in listed)
    assert [a.age_seconds for a in listed] == sorted(a.age_seconds for a in listed)
    assert len({a.url for a in listed}) == 60


# -- explicit profiles, state, bad settings ---------------------------------------------------------------------


def test_given_profiles_win_and_every_other_topic_is_drawn():
    world = frozen(seed=3, profiles={"story": STORY})
    assert world.profile("story") == STORY
    assert world.profile("else") == drawn_profile(3, "else", ORIGIN)
    assert frozen(seed=4, profiles={"story": STORY}).expected("story", ORIGIN, BURST.end) == world.expected(
        "story", ORIGIN, BURST.end
    )
    state = json.loads(json.dumps(world.state()))
    assert "every" not in state and state["seed"] == 3 and state["window"] == world.window
    assert state["profiles"] == {
        "story": {
            "base_per_hour": 2.0,
            "bursts": [
                {
                    "start": BURST.start,
                    "start_iso": "2026-01-01T02:00:00Z",
                    "peak_per_hour": 100.0,
                    "fade_hours": 1.0,
                }
            ],
        }
    }
    assert list(world.profiles_state(["else"])) == ["story", "else"]
    assert isinstance(world, NewsWorld) and "RatedWorld seed=3" in repr(world)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: Profile(0), "base_per_hour"),
        (lambda: Profile(MAX_PER_HOUR * 2), "base_per_hour"),
        (lambda: Profile(10, (Burst(ORIGIN, 5, 1),)), "below the base"),
        (lambda: Profile(1, [Burst(ORIGIN, 5, 1)]), "bursts"),
        (lambda: Burst(ORIGIN, 5, 0), "fade_hours"),
        (lambda: Burst(math.nan, 5, 1), "start"),
        (lambda: Burst(ORIGIN, -1, 1), "peak_per_hour"),
        (lambda: RatedWorld(seed=1.5), "seed"),
        (lambda: RatedWorld(burst_share=2), "burst_share"),
        (lambda: RatedWorld(horizon_hours=0), "horizon_hours"),
        (lambda: RatedWorld(profiles={"x": 3}), "profiles"),
    ],
)
def test_bad_profiles_and_settings_are_refused(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_serve_makes_a_rated_world_from_a_seed_with_world():
    def world_of(*args):
        return make_world(_parser().parse_args(["serve", *args]), ["google", "bing"])

    world = world_of("--world", "--rated-seed", "5", "--speed", "2", "--stale", "bing")
    assert isinstance(world, RatedWorld) and world.seed == 5 and world.speed == 2 and world.stale_engines() == ("bing",)
    assert type(world_of("--world")) is NewsWorld
    with pytest.raises(ValueError, match="--rated-seed needs --world"):
        world_of("--rated-seed", "5")


# -- over HTTP -------------------------------------------------------------------------------------------------


def test_an_engine_serves_a_rated_worlds_pages_and_state():
    world = frozen(seed=7, profiles={"story": STORY}, window=25)
    world.advance(BURST.start - ORIGIN + 600)  # ten minutes into the story
    with FakeEngines(("bing",), world=world) as fakes:
        listed = world.articles("bing", "story")
        assert 10 < len(listed) <= 25 and listed[0].age_seconds < 600
        reader = parsing_reader("bing", fakes.base_url("bing"))
        fetched = datetime.now(UTC)
        for page in range(-(-len(listed) // 10)):
            reading = reading_of(reader, get(results_url(fakes, "bing", "story", page)), page, fetched)
            assert reading.verdict.cls == "ok", reading.verdict
            parsed = {normalize_url(reading_url(r.url), {"127.0.0.1"}) for r in reading.results}
            assert parsed == set(bing.expected_articles("story", page, listed))
            assert parsed <= {a.url for a in listed}
        status, _, body, _ = fetch(fakes.base_url("bing") + "/__fakes__/world")
        state = json.loads(body)
        assert status == 200 and state["seed"] == 7 and list(state["profiles"]) == ["story"]
