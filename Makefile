# topicstreams — set-up, main job, lint, tests, demo. Every target sets up first; `make setup` is idempotent.

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
SCRAPY := $(VENV)/bin/scrapy
STAMP := $(VENV)/.setup-done

.PHONY: setup browser postgresql run lint test test-fast demo bench clean

setup: $(STAMP) browser

$(STAMP): pyproject.toml setup.py
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "topicstreams needs Python 3.11 or newer (PYTHON=… make setup)")'
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $(STAMP)

browser: $(STAMP)
	$(PY) -m topicstreams.browser.chromium ensure

# The tests start their own PostgreSQL server (as the postgres user, in a temporary folder) from Debian's package:
# installed here when missing and possible; where it is not, those tests skip and say why.
postgresql:
	@if ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		echo "installing Debian's postgresql for the tests"; \
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
			postgresql >/dev/null; } || echo "WARNING: could not install PostgreSQL: its tests will be skipped"; \
	else echo "WARNING: no PostgreSQL server and no root apt-get: the PostgreSQL tests will be skipped"; fi

# The main job: `scrapy db upgrade`, then `scrapy crawlall` and `scrapy serve` side by side until Ctrl-C or SIGTERM
# (topicstreams/cli/together.py). `exec`: make's SIGTERM reaches the supervisor itself, not a shell in between.
run: setup
	TOPICSTREAMS_CONFIG="$${TOPICSTREAMS_CONFIG:-config.example.yml}" exec $(PY) -m topicstreams.cli.together

# The house's rules (pyproject.toml): ruff's lint and format, the import contracts (layers, no cycles, no fakes in the
# product), mypy --strict on the pure cores. Every check runs, even after one fails, so that one run shows them all.
LINT_CHECKS := "ruff check --output-format concise ." "ruff format --check ." "lint-imports" "mypy"

lint: $(STAMP)
	@failed=; for check in $(LINT_CHECKS); do \
		echo "== $$check"; $(VENV)/bin/$$check || failed="$$failed [$$check]"; \
	done; \
	if [ -n "$$failed" ]; then echo "lint failed:$$failed"; exit 1; fi

# The rules first, then the tests, on four pytest-xdist workers, a test file each at a time. Most tests wait on a
# paced crawl or a clock rather than on the CPU: two workers on two cores left the CPU idle half the time, four keep it
# busy (pacing is asserted on the crawl's own send times, which hold under load). The files go out in the order
# tests/conftest.py gives them (no reordering by size): pytest-playwright's browser tests must be the last of their
# worker, and the short soak's test the first of its own.
test: setup postgresql lint
	$(PY) -m pytest -n 4 --dist loadfile --no-loadscope-reorder

# The fast tests alone (tests/unit: no browser, no server, no crawl), in well under a minute.
test-fast: setup
	$(PY) -m pytest tests/unit

demo: setup
	$(SCRAPY) demo

bench: setup
	$(PY) benchmarks/store.py
	$(PY) benchmarks/render.py
	$(PY) benchmarks/feed.py
	$(PY) benchmarks/monitor.py
	$(PY) benchmarks/alerts.py
	$(PY) benchmarks/cluster.py

clean:
	rm -rf $(VENV) .topicstreams *.egg-info build
