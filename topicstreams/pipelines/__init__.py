"""The item pipelines: each item normalized (:mod:`.normalize`), then stored in batches (:mod:`.store`)."""
