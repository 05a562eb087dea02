"""Freshness, pure: topic rates (:mod:`.rates`), the budget's allocation (:mod:`.allocation`), :mod:`.budget`."""
