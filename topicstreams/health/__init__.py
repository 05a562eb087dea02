"""Engine health: the target health score (:mod:`.score`), its windows (:mod:`.window`), the bands that act
(:mod:`.monitor`, :mod:`.extension`) and the report (:mod:`.report`)."""

from topicstreams.health.score import DEFAULT_WEIGHTS, Window, band_of, health_score

__all__ = ["DEFAULT_WEIGHTS", "Window", "band_of", "health_score"]
