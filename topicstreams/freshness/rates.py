"""How many new articles a topic yields per hour on one engine, learnt from what each visit found new.

One :class:`RateEstimate` per (topic, engine), immutable; :func:`observe` folds one visit into it and returns the next
one. The planner stores it (table ``topic_rates``) so that a restart, or another node in lease mode, starts from it.

**The model.** New articles arrive as a Poisson process whose rate drifts. A visit reports ``new`` articles not stored
before over the ``hours`` since the previous visit of the pair. The estimate is a decayed Poisson rate::

    evidence <- evidence * d + n_eff        exposure <- exposure * d + hours        rate = evidence / exposure

``d = exp(-hours / memory_hours)`` forgets with time (the planner's ``TOPICSTREAMS_RATE_MEMORY``, 6 h by default), but
``d`` is never above ``1 - 1 / MEMORY_VISITS``: a topic visited every minute would otherwise average over hundreds of
visits and take hours to notice a change. The memory is therefore the shorter of ``memory_hours`` and about
:data:`MEMORY_VISITS` visits: a step in the rate is half followed after ~5 visits, and a step too large to be noise
(below) at once.

**Censoring.** When the visit's last page held only new articles, more may have fallen off the pages: ``new`` is a
lower bound. The visit then counts ``n_eff = E[N | N >= new]`` under Poisson(``mu``), ``mu = max(rate, new / hours) *
hours``: what a Poisson count known to be at least ``new`` is worth on average. It is never below ``new`` nor below the
current expectation, so a censored visit raises the estimate above the same count uncensored, and a run of censored
visits keeps pushing it up until the planner's shorter interval brings the count back below a page.

**Jumps.** A story breaks, or ends: waiting ~8 visits to follow it loses the articles of the burst. A visit whose count
is improbable under the current estimate, ``P(N >= new) < JUMP_P`` (or, uncensored, ``P(N <= new) < JUMP_P``), forgets
the history first: the history is cut down to :data:`JUMP_KEEP` of this visit's own exposure, so the new rate is four
fifths this visit's rate and one fifth the old one, and :attr:`Observed.jumped` tells the planner to bring the next
visit forward. The
probabilities are taken under the *predictive* distribution of the count, not a bare Poisson at the point estimate: the
rate is known only from ``evidence`` articles, so the count is negative-binomial (a Poisson whose rate has the gamma
posterior of shape ``evidence + 1`` and scale ``1 / exposure``; the one pseudo-article stands for "no rate can be told
from zero with less than an article of evidence"). A quiet topic's single article is then no surprise while a handful
in an hour wake it up. Counts drawn from the learnt rate trip the test at most about once per ``1 / JUMP_P`` visits
per tail: with 1e-4 and pairs visited every few minutes, a few false jumps a day over hundreds of pairs, each costing
one early visit and a memory that refills within ~8 visits. With 8 visits of memory, a visit jumps when it finds 9
articles where 1 was expected, 11 for 2, 26 for 10: a breaking story is caught on its first visit. A fall to silence
is rarely a jump (an empty visit is improbable only where 10 or more were expected): the memory follows it, halving
the rate within ~5 empty visits; it costs requests, not articles.

**The first visit** of a pair (``visits == 0``) finds everything new: it records the page size (``page_items``, the
largest first-page item count seen, the engine's page size for the topic) and ``visits = 1``, but it is no rate
observation: the rate stays 0 and :attr:`RateEstimate.known` False until the second visit.

Counts are computed with :func:`math.lgamma` and log-sum-exp, summing each tail from its own terms (no subtraction of
near-equal numbers), so a count of thousands costs a few milliseconds and no SciPy.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

MEMORY_VISITS = 8
"""The most visits the estimate remembers: the decay factor per visit is at most ``1 - 1 / MEMORY_VISITS``."""

JUMP_P = 1e-4
"""A visit whose count is less probable than this (either tail) under the current estimate is a jump (the false-jump
rate per visit and tail on counts drawn from the learnt rate)."""

JUMP_KEEP = 0.25
"""On a jump the history is cut to this share of the visit's own exposure (the new count weighs 1 / 1.25 = 80 %)."""

NEGLIGIBLE = 40.0
"""A term ``exp(-40)`` (4e-18) times the largest one ends a tail's sum."""

MAX_TERMS = 10_000
"""The most terms a tail's sum takes (see :func:`log_tails`)."""

MIN_HOURS = 1.0 / 3600.0
"""A visit less than a second after the previous one counts no time: its articles are added, no exposure, no test."""


@dataclass(frozen=True, slots=True)
class RateEstimate:
    """What is known of one (topic, engine) pair's rate of new articles.

    ``rate_per_hour`` = ``evidence / exposure_hours`` (0 while nothing is known); ``evidence``: the decayed count of
    new articles (fractional: decay and censoring); ``exposure_hours``: the decayed hours they were counted over;
    ``visits``: the visits observed, the first included; ``page_items``: the largest first-page item count seen."""

    rate_per_hour: float = 0.0
    evidence: float = 0.0
    exposure_hours: float = 0.0
    visits: int = 0
    page_items: int = 0

    @classmethod
    def fresh(cls) -> RateEstimate:
        """The estimate of a pair never visited."""
        return cls()

    @property
    def known(self) -> bool:
        """Whether a rate was learnt (a visit after the first one covered some time); if not, the rate means nothing:
        the planner gives the topic the fixed schedule's interval."""
        return self.exposure_hours > 0.0


@dataclass(frozen=True, slots=True)
class Observed:
    """The estimate after one visit, and whether the visit was a jump (the history forgotten: visit again soon)."""

    estimate: RateEstimate
    jumped: bool


def observe(
    estimate: RateEstimate, *, new: int, hours: float, censored: bool, items: int, memory_hours: float
) -> Observed:
    """``estimate`` with one visit folded in: ``new`` articles not stored before for the pair, ``hours`` since the
    pair's previous visit, ``censored`` if the visit's last page held only new articles (``new`` is a lower bound),
    ``items`` on the first page, ``memory_hours`` the estimator's memory (see the module's docstring).

    ``hours`` under :data:`MIN_HOURS` (a clock that went back, two visits at once) counts as 0: the articles are added
    without new exposure."""
    if new < 0 or items < 0:
        raise ValueError(f"new and items must be counts >= 0, got new={new!r}, items={items!r}")
    if not (math.isfinite(memory_hours) and memory_hours > 0):
        raise ValueError(f"memory_hours must be a finite number of hours > 0, got {memory_hours!r}")
    if math.isnan(hours):
        raise ValueError("hours must be a number of hours, got NaN")
    page_items = max(estimate.page_items, items)
    if estimate.visits == 0:
        return Observed(replace(estimate, visits=1, page_items=page_items), jumped=False)
    hours = hours if hours >= MIN_HOURS else 0.0
    censored = censored and new > 0
    decay = min(math.exp(-hours / memory_hours), 1.0 - 1.0 / MEMORY_VISITS) if hours > 0 else 1.0
    jumped = is_jump(estimate, new=new, hours=hours, censored=censored)
    if jumped:
        decay = min(decay, JUMP_KEEP * hours / estimate.exposure_hours)
    known_rate = 0.0 if jumped else estimate.rate_per_hour
    count = censored_count(new, max(known_rate, new / hours) * hours) if censored and hours > 0 else float(new)
    evidence = estimate.evidence * decay + count
    exposure = estimate.exposure_hours * decay + hours
    rate = evidence / exposure if exposure > 0 else 0.0
    following = RateEstimate(rate, evidence, exposure, estimate.visits + 1, page_items)
    return Observed(following, jumped=jumped)


def is_jump(estimate: RateEstimate, *, new: int, hours: float, censored: bool) -> bool:
    """Whether ``new`` articles in ``hours`` are improbable (a tail below :data:`JUMP_P`) under ``estimate``'s
    predictive distribution; never before a rate is known nor over no time. A censored count is only tested upward."""
    if not estimate.known or hours <= 0:
        return False
    shape = estimate.evidence + 1.0
    log_p = math.log(estimate.exposure_hours) - math.log(estimate.exposure_hours + hours)
    log_q = math.log(hours) - math.log(estimate.exposure_hours + hours)

    def log_pmf(n: int) -> float:
        return math.lgamma(n + shape) - math.lgamma(shape) - math.lgamma(n + 1) + shape * log_p + n * log_q

    mode = (shape - 1.0) * math.exp(log_q - log_p)
    log_jump = math.log(JUMP_P)
    _, log_at_least = log_tails(log_pmf, new, mode)
    if log_at_least < log_jump:
        return True
    if censored:
        return False
    log_at_most, _ = log_tails(log_pmf, new + 1, mode)
    return log_at_most < log_jump


def censored_count(at_least: int, mu: float) -> float:
    """``E[N | N >= at_least]`` for ``N`` ~ Poisson(``mu``): ``mu * P(N >= at_least - 1) / P(N >= at_least)``."""
    if at_least <= 0 or mu <= 0:
        return float(max(at_least, 0))

    def log_pmf(n: int) -> float:
        return -mu + n * math.log(mu) - math.lgamma(n + 1)

    mode = mu
    _, log_from_before = log_tails(log_pmf, at_least - 1, mode)
    _, log_from = log_tails(log_pmf, at_least, mode)
    return max(float(at_least), mu * math.exp(log_from_before - log_from))


def log_tails(log_pmf: Callable[[int], float], k: int, mode: float) -> tuple[float, float]:
    """``(log P(N < k), log P(N >= k))`` for a unimodal distribution on 0, 1, 2, … with its ``mode``: each tail
    summed from its own terms outward from ``k`` (no subtraction of near-equal numbers), both normalised by their
    sum. Each sum stops once past the mode and negligible, or after :data:`MAX_TERMS` terms: for a mode thousands of
    terms away (a rate learnt over seconds, tested over days) the far tail comes out larger than it is, never smaller,
    which only makes a jump less likely."""
    k = max(k, 0)
    below = sum_outward(log_pmf, k - 1, -1, mode)
    above = sum_outward(log_pmf, k, 1, mode)
    total = log_sum([below, above])
    return below - total, above - total


def sum_outward(log_pmf: Callable[[int], float], start: int, step: int, mode: float) -> float:
    """``log`` of the sum of the terms from ``start`` on by ``step`` (down to 0 at most), as :func:`log_tails` says."""
    terms: list[float] = []
    peak = -math.inf
    n = start
    while n >= 0 and len(terms) < MAX_TERMS:
        term = log_pmf(n)
        terms.append(term)
        peak = max(peak, term)
        past_mode = n >= mode if step > 0 else n <= mode
        if past_mode and (term == -math.inf or term < peak - NEGLIGIBLE):
            break
        n += step
    return log_sum(terms)


def log_sum(logs: list[float]) -> float:
    """``log(sum(exp(x) for x in logs))`` without overflow; ``-inf`` for no terms."""
    top = max(logs, default=-math.inf)
    if top == -math.inf:
        return -math.inf
    return top + math.log(math.fsum(math.exp(x - top) for x in logs))
