"""Engine health, the pure model: the target health score and its bands (:mod:`.score`), the windows of responses
it is computed on (:mod:`.window`), one engine's health over time and the actions its bands call for
(:mod:`.monitor`), parser health (:mod:`.parser`), the cost per valid record (:mod:`.cost`) and the node's exit-IP
saturation (:mod:`.saturation`).

Nothing here reads a database or a configuration file, nor knows Scrapy: the extension that feeds the model a
crawl's responses is :mod:`topicstreams.extensions.watch`, the report built from the stored rows is
:mod:`topicstreams.reports.health_report`.
"""

from topicstreams.health.score import DEFAULT_WEIGHTS, Window, band_of, health_score

__all__ = ["DEFAULT_WEIGHTS", "Window", "band_of", "health_score"]
