"""The watching side of the web app, its routes mounted together: ``GET /monitor``
(:mod:`topicstreams.web.monitor_view`), ``GET /api/health`` (:mod:`topicstreams.web.health_api`) and
``POST /api/engines/{engine}/resume`` (:mod:`topicstreams.web.engine_resume`).

* **``/monitor``** — one row per node and engine from the health report (:mod:`topicstreams.web.monitor_rows`) and
  per engine charts drawn on the server (:mod:`topicstreams.web.monitor_charts`).
* **``/api/health``** — the object of ``scrapy health --json --all-nodes``, plus ``routes``.
* **Resume** — the one write of the app: what ``scrapy health resume ENGINE --node NODE`` does, for a person
  holding ``web.admin_token``.
"""

from __future__ import annotations

from fastapi import APIRouter

from topicstreams.web import engine_resume, health_api, monitor_view

router = APIRouter()
router.include_router(monitor_view.router)
router.include_router(health_api.router)
router.include_router(engine_resume.router)
