"""A proxied route's standing across the engines that take it, and the lanes on it, on an injected clock."""

from __future__ import annotations

import random

from topicstreams.crawl.cooldown import CooldownPolicy
from topicstreams.crawl.engine_state import EngineState
from topicstreams.crawl.route_standing import DOWN, RECOVERED, RouteStanding
from topicstreams.engines.classify import ResponseClass, classify_failure, is_route_failure

POLICY = CooldownPolicy(2, 2, 8)
PROXY_DOWN = "ERR_PROXY_CONNECTION_FAILED"


class Clock:
    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def engines(clock: Clock, *names: str, routes=("r0", "r1")) -> tuple[dict[str, EngineState], dict[str, RouteStanding]]:
    """Engines of one process taking proxied ``routes``: their lanes share the process's standing of each route."""
    standings = {route: RouteStanding(route, POLICY, clock) for route in routes}
    states = {
        name: EngineState(
            name,
            floor=1.0,
            jitter_ratio=0.0,
            cooldown=POLICY,
            clock=clock,
            rng=random.Random(1),
            routes=routes,
            standing_of=standings.get,
        )
        for name in names
    }
    return states, standings


def test_the_proxys_failures_and_the_407_are_the_routes_a_block_is_not():
    assert is_route_failure(PROXY_DOWN) and is_route_failure("HTTP 407") and is_route_failure("ERR_EMPTY_RESPONSE")
    assert not is_route_failure("challenge marker 'sorry'") and not is_route_failure("HTTP 429")
    tunnel = classify_failure(Exception("Page.goto: net::ERR_TUNNEL_CONNECTION_FAILED at http://x/"))
    assert tunnel.cls is ResponseClass.HARD_BLOCK and is_route_failure(tunnel.reason)


def test_a_route_is_down_only_when_it_fails_on_every_engine_that_takes_it():
    clock = Clock()
    states, standings = engines(clock, "google", "bing")
    google, bing = states["google"].lane("r0"), states["bing"].lane("r0")
    google.record(ResponseClass.HARD_BLOCK, reason=PROXY_DOWN)
    assert google.route_change is None and not standings["r0"].down  # bing still gets answers on it
    assert google.bench_remaining() == 2 and google.failures == 0  # a short wait, never counted against google
    bing.record(ResponseClass.OK, reason="10 results")
    bing.record(ResponseClass.HARD_BLOCK, reason=PROXY_DOWN)
    assert bing.route_change == DOWN and standings["r0"].down
    # the route's bench holds every engine's lane on it; the other route is free
    assert google.bench_remaining() == bing.bench_remaining() == 2
    assert states["google"].lane("r1").bench_remaining() == 0 and not states["google"].benched


def test_a_down_route_sends_one_probe_when_its_bench_is_over_and_any_answer_brings_it_back():
    clock = Clock()
    states, standings = engines(clock, "google", "bing")
    google, bing = states["google"].lane("r0"), states["bing"].lane("r0")
    for lane in (google, bing):
        lane.record(ResponseClass.HARD_BLOCK, reason=PROXY_DOWN)
    assert standings["r0"].down
    clock.now += 2
    assert google.wait_time() == 0 and google.start_request() is True  # the route's probe
    assert bing.wait_time() is None  # nothing else goes on the route until its outcome is known
    google.record(ResponseClass.HARD_BLOCK, probe=True, reason=PROXY_DOWN)  # the probe failed: a longer bench
    assert standings["r0"].down and bing.bench_remaining() == 4
    clock.now += 4
    assert bing.start_request() is True
    bing.record(ResponseClass.CHALLENGE, probe=True, reason="challenge marker 'captcha'")
    assert bing.route_change == RECOVERED and not standings["r0"].down  # the engine answered: the route works
    assert bing.failures == 1 and bing.bench_remaining() > 0  # the challenge is bing's own business on the pair
    assert google.bench_remaining() == 0 and google.failures == 0  # google was never held responsible
    assert standings["r0"].down_since is not None  # kept for the recovery's message


def test_a_probe_that_never_comes_back_lets_the_next_request_probe():
    clock = Clock()
    states, standings = engines(clock, "google")
    lane = states["google"].lane("r0")
    lane.record(ResponseClass.HARD_BLOCK, reason=PROXY_DOWN)
    clock.now += 2
    assert lane.start_request() is True
    lane.forget_probe()
    assert lane.wait_time() is not None and lane.start_request() is True


def test_a_direct_route_has_no_standing_its_connection_failures_are_the_nodes_network():
    clock = Clock()
    state = EngineState("google", floor=1.0, jitter_ratio=0.0, cooldown=POLICY, clock=clock, routes=("home",))
    lane = state.lane("home")
    assert lane.standing is None
    lane.record(ResponseClass.HARD_BLOCK, reason="ERR_CONNECTION_REFUSED", connection_level=True)
    assert lane.failures == 1 and lane.route_change is None
