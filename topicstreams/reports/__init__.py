"""The reports people and monitors read: engine health (``scrapy health``, ``/api/health``, ``/monitor``) and
the nodes (``scrapy nodes``), built from storage's read models and the health model."""
