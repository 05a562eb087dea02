"""``scrapy demo``: the main job for about a minute against the bundled fake engines, then what was stored.

It never touches the user's database or profiles: everything goes into ``.topicstreams/demo/`` (a fresh
``demo.db`` each time), and no request leaves the machine.
"""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import yaml
from sqlalchemy import func, select

from topicstreams import ENGINES
from topicstreams.cli import ConfiguredCommand
from topicstreams.fakes import FakeEngines
from topicstreams.storage import News, Topic, TopicNews, TopicNewsEngine, engine_for


def available_engines() -> list[str]:
    """The engines whose fake pages ship with the project."""
    return [name for name in ENGINES if importlib.util.find_spec(f"topicstreams.fakes.{name}")]


DEMO_TOPICS = ["artificial intelligence", "climate change", "electric vehicles"]


def demo_config(fakes: FakeEngines) -> dict:
    return {
        "database": {"url": "sqlite:///demo.db"},
        "topics": DEMO_TOPICS,
        "engines": {name: ({"enabled": True, "base_url": fakes.base_url(name)} if name in fakes.engines
                           else {"enabled": False}) for name in ENGINES},
        "scraper": {
            "scrape_interval": 20,
            "max_pages": 2,
            "pacing": {"default_min_interval": 0.5, "per_engine": {"brave": 1.0}},
            "cooldown": {"initial": 5, "max": 60},
        },
        "browser": {"profile_dir": "profiles"},
    }


class Command(ConfiguredCommand):
    requires_project = True

    def syntax(self) -> str:
        return "[--seconds N]"

    def short_desc(self) -> str:
        return "Crawl the bundled fake engines for about a minute, then print what was stored"

    def add_options(self, parser) -> None:
        super().add_options(parser)
        parser.add_argument("--seconds", type=float, default=60.0, help="how long to crawl (default 60)")
        parser.add_argument("--folder", default=".topicstreams/demo", help="where the demo keeps its files")

    def run(self, args: list[str], opts) -> None:
        folder = Path(opts.folder).resolve()
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        with FakeEngines(engines=available_engines()) as fakes:
            config_path = folder / "config.yml"
            config_path.write_text(yaml.safe_dump(demo_config(fakes), sort_keys=False))
            print(f"demo: fake engines {', '.join(f'{n} at {fakes.base_url(n)}' for n in fakes.engines)}")
            print(f"demo: crawling for {opts.seconds:g} s into {folder / 'demo.db'}")
            self.settings.set("TOPICSTREAMS_CONFIG", str(config_path), priority="cmdline")
            self.settings.set("CLOSESPIDER_TIMEOUT", opts.seconds, priority="cmdline")
            for name in fakes.engines:
                self.crawler_process.crawl(name)
            self.crawler_process.start()
        self.print_stored(f"sqlite:///{folder / 'demo.db'}")

    @staticmethod
    def print_stored(database_url: str) -> None:
        engine = engine_for(database_url)
        engines_of = (select(TopicNewsEngine.topic_id, TopicNewsEngine.news_id,
                             func.group_concat(TopicNewsEngine.engine, ",").label("engines"))
                      .group_by(TopicNewsEngine.topic_id, TopicNewsEngine.news_id).subquery())
        query = (select(Topic.name, News.title, News.source, News.url, News.published_at, engines_of.c.engines)
                 .join(TopicNews, TopicNews.topic_id == Topic.id)
                 .join(News, News.id == TopicNews.news_id)
                 .join(engines_of, (engines_of.c.topic_id == TopicNews.topic_id)
                       & (engines_of.c.news_id == TopicNews.news_id))
                 .order_by(Topic.name, News.published_at.desc()))
        with engine.connect() as conn:
            rows = conn.execute(query).all()
        current = None
        for topic, title, source, url, published, engines in rows:
            if topic != current:
                current = topic
                print(f"\n== {topic}")
            when = f"{published:%Y-%m-%d %H:%M}" if published else "?"
            print(f"  {when}  [{engines}] {title} — {source}\n      {url}")
        print(f"\ndemo: {len(rows)} articles stored in {database_url.removeprefix('sqlite:///')}")
