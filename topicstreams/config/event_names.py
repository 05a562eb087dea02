"""The names of the events ``alerting.events`` may list: the configuration checks them, alerts are made of them."""

PAUSED, RESUMED, RECOVERED, DEGRADED = "paused", "resumed", "recovered", "degraded"
SATURATION, CANARY_MISMATCH, PARSER_CRITICAL = "saturation", "canary_mismatch", "parser_critical"
COVERAGE_DROP, SILENCE, NETWORK_DOWN = "coverage_drop", "silence", "network_down"
DATA_LOSS = "data_loss"
ROUTE_DOWN, ROUTE_RECOVERED = "route_down", "route_recovered"

EVENTS: tuple[str, ...] = (
    PAUSED,
    RESUMED,
    RECOVERED,
    DEGRADED,
    SATURATION,
    CANARY_MISMATCH,
    PARSER_CRITICAL,
    COVERAGE_DROP,
    SILENCE,
    NETWORK_DOWN,
    DATA_LOSS,
    ROUTE_DOWN,
    ROUTE_RECOVERED,
)
"""Every event ``alerting.events`` may name (its default: all of them)."""
