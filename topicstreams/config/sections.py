"""The configuration's typed sections: one frozen dataclass per mapping of the schema, built from a validated
configuration (:meth:`Sections.of`), read as attributes (``sections.scraper.pacing.jitter_ratio``).

No default lives here: every value comes from the validated configuration, whose defaults are the packaged ones
(``defaults.yml``). The fields follow the schema's keys (:mod:`topicstreams.config.schema`) one to one; a list is a
tuple, a mapping keyed by engine name a ``dict``. Scalars are converted to the field's type as Scrapy's setting
getters would (``"2"`` to ``2``), so a section is also built from a crawler's settings
(:mod:`topicstreams.config.setting_names`).
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from topicstreams import ENGINES
from topicstreams.engines.page_limits import PageLimits


@dataclass(frozen=True)
class DatabaseSection:
    url: str


@dataclass(frozen=True)
class NodeSection:
    id: str
    """``node.id`` (the host name when the configuration leaves it out)."""


@dataclass(frozen=True)
class EngineSection:
    enabled: bool
    base_url: str
    freshness: str


@dataclass(frozen=True)
class PacingSection:
    default_min_interval: float
    jitter_ratio: float
    per_engine: dict[str, float]

    def floor(self, engine: str) -> float:
        """An engine's pacing floor: its own, else the default."""
        return pacing_floor(self.per_engine, self.default_min_interval, engine)


def pacing_floor(per_engine: Mapping[str, float] | None, default: float, engine: str) -> float:
    """The one rule of an engine's pacing floor (``scraper.pacing``): its own in ``per_engine``, else ``default``."""
    own = (per_engine or {}).get(engine)
    return float(default if own is None else own)


@dataclass(frozen=True)
class CooldownSection:
    initial: float
    factor: float
    max: float


@dataclass(frozen=True)
class SoftBlockSection:
    min_size_ratio: float


@dataclass(frozen=True)
class SaturationSection:
    canary_engines: tuple[str, ...]
    robust_threshold: int


@dataclass(frozen=True)
class AdaptiveSection:
    """``scraper.adaptive``: the bounds of a topic's interval under the adaptive schedule, and its depth on demand."""

    min_interval: float
    max_interval: float
    burst_pages: int


@dataclass(frozen=True)
class ScraperSection:
    scrape_interval: float
    max_pages: int
    once_attempts: int
    schedule: str
    adaptive: AdaptiveSection
    pacing: PacingSection
    cooldown: CooldownSection
    soft_block: SoftBlockSection
    limits: PageLimits
    """``scraper.limits``: the engines' own bounds on a page (:mod:`topicstreams.engines.page_limits`)."""
    saturation: SaturationSection
    shard: str
    assignment: str
    lease_seconds: float
    retention_days: float


@dataclass(frozen=True)
class HealthSection:
    window: float
    min_requests: int
    baseline_days: float
    smoothing: float
    degrade_factor: float
    weights: dict[str, float]
    """The penalty of each signal at its worst, in the packaged order of the signals."""
    history_days: float
    coverage_drop: float


@dataclass(frozen=True)
class DigestSection:
    """One ``alerting.digests`` entry (its packaged entry defaults filled in when the configuration loaded)."""

    name: str
    topics: tuple[str, ...]
    engines: tuple[str, ...]
    query: str
    every: str
    at: str | None
    urls: tuple[str, ...] = field(repr=False)
    max_items: int


@dataclass(frozen=True)
class AlertingSection:
    urls: tuple[str, ...] = field(repr=False)
    webhook_url: str = field(repr=False)
    events: tuple[str, ...]
    repeat: float
    silence_factor: float
    silence_min_events: int
    digests: tuple[DigestSection, ...]

    def delivery(self) -> dict[str, Any]:
        """What a notifier takes of the section (:class:`topicstreams.alerts.delivery.Notifier` reads a mapping):
        the URLs, the events, the webhook, and the digests' URLs (what a leftover digest is matched to)."""
        return {
            "urls": list(self.urls),
            "events": list(self.events),
            "webhook_url": self.webhook_url,
            "digests": [{"urls": list(digest.urls)} for digest in self.digests],
        }


@dataclass(frozen=True)
class CanaryQuerySection:
    query: str
    min_results: int
    expect_domain: str


@dataclass(frozen=True)
class CanariesSection:
    interval: float
    queries: dict[str, tuple[CanaryQuerySection, ...]]


@dataclass(frozen=True)
class SlaSection:
    latency_good_ms: float
    latency_critical_ms: float
    errors_good: float
    errors_critical: float


@dataclass(frozen=True)
class WebSection:
    host: str
    port: int
    page_size: int
    admin_token: str = field(repr=False)
    metrics_token: str = field(repr=False)
    sla: SlaSection


@dataclass(frozen=True)
class BrowserSection:
    executable_path: str
    headless: bool
    profile_dir: str
    consent: str


@dataclass(frozen=True)
class ProxySection:
    enabled: bool
    proxies: tuple[str, ...] = field(repr=False)


@dataclass(frozen=True)
class GeolocationSection:
    latitude: float
    longitude: float


@dataclass(frozen=True)
class AntiDetectionSection:
    proxy: ProxySection
    timezone_id: str
    locale: str
    geolocation: GeolocationSection | None


@dataclass(frozen=True)
class ViewportSection:
    width: int
    height: int


@dataclass(frozen=True)
class PersonaSection:
    """How a route's browser context presents itself; an empty value (or null) leaves Chromium's own."""

    user_agent: str
    locale: str
    timezone_id: str
    geolocation: GeolocationSection | None
    viewport: ViewportSection | None


@dataclass(frozen=True)
class RouteSection:
    """One entry of ``routes``: an exit (``proxy``: ``direct`` or a proxy URL, its credentials masked wherever it is
    shown), the persona its contexts wear, and the engines that may use it (empty: every engine)."""

    name: str
    proxy: str = field(repr=False)
    persona: PersonaSection
    engines: tuple[str, ...]

    def serves(self, engine: str) -> bool:
        return not self.engines or engine in self.engines


@dataclass(frozen=True)
class Sections:
    """The whole validated configuration, typed."""

    database: DatabaseSection
    topics: tuple[str, ...]
    node: NodeSection
    engines: dict[str, EngineSection]
    scraper: ScraperSection
    health: HealthSection
    alerting: AlertingSection
    canaries: CanariesSection
    web: WebSection
    browser: BrowserSection
    anti_detection: AntiDetectionSection
    routes: tuple[RouteSection, ...]

    @classmethod
    def of(cls, data: Mapping[str, Any]) -> Sections:
        """The sections of a validated configuration (``Config.data``)."""
        return build_section(cls, data)

    def enabled_engines(self) -> list[str]:
        """The enabled engines, in the project's order of engines."""
        return [name for name in ENGINES if name in self.engines and self.engines[name].enabled]


# ---------------------------------------------------------------------------------------------------------
# Building a section from a mapping: each field from its key, converted to the field's type.

T = TypeVar("T")

_TRUE, _FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off", "")


def build_section(cls: type[T], data: Mapping[str, Any], key: str = "") -> T:
    """The dataclass ``cls`` from ``data``: each field from the key of its name (``key`` names ``data`` in an
    error). A key left out is a :class:`KeyError`: a section has no defaults of its own."""
    if not isinstance(data, Mapping):
        raise TypeError(f"{key or 'the configuration'}: a mapping expected, got {data!r}")
    hints = typing.get_type_hints(cls)
    values = {
        each.name: convert(hints[each.name], data[each.name], f"{key}.{each.name}" if key else each.name)
        for each in dataclasses.fields(cls)  # type: ignore[arg-type]
    }
    return cls(**values)


def convert(kind: Any, value: Any, key: str) -> Any:
    """``value`` as the type ``kind``: a section, ``X | None``, ``tuple[X, ...]``, ``dict[str, X]`` or a scalar."""
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if origin in (types.UnionType, typing.Union):
        if value is None:
            return None
        (inner,) = (arg for arg in args if arg is not type(None))
        return convert(inner, value, key)
    if dataclasses.is_dataclass(kind):
        return build_section(kind, value, key)  # type: ignore[arg-type]
    if origin is tuple:
        return tuple(convert(args[0], item, f"{key}[{index}]") for index, item in enumerate(value))
    if origin is dict:
        return {name: convert(args[1], item, f"{key}.{name}") for name, item in (value or {}).items()}
    if value is None:
        raise TypeError(f"{key}: a value expected, got null")
    if kind is bool:
        return value if isinstance(value, bool) else _boolean(value, key)
    if kind in (int, float, str):
        return kind(value)
    raise TypeError(f"{key}: no conversion to {kind!r}")  # pragma: no cover - a field of a type not handled


def _boolean(value: Any, key: str) -> bool:
    """A boolean as Scrapy's ``getbool`` reads one (``1``, ``"true"``, ``"False"``…)."""
    word = str(value).strip().lower()
    if word in _TRUE or word in _FALSE:
        return word in _TRUE
    raise ValueError(f"{key}: true or false expected, got {value!r}")
