# topicstreams — set-up, main job, tests, demo. Every target sets up first; `make setup` is idempotent.

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
SCRAPY := $(VENV)/bin/scrapy
STAMP := $(VENV)/.setup-done

.PHONY: setup browser run test demo bench clean

setup: $(STAMP) browser

$(STAMP): pyproject.toml setup.py
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "topicstreams needs Python 3.11 or newer (PYTHON=… make setup)")'
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $(STAMP)

browser: $(STAMP)
	$(PY) -m topicstreams.browser ensure

run: setup
	TOPICSTREAMS_CONFIG="$${TOPICSTREAMS_CONFIG:-config.example.yml}" $(SCRAPY) crawlall

test: setup
	$(PY) -m pytest

demo: setup
	$(SCRAPY) demo

bench: setup
	$(PY) benchmarks/store.py
	$(PY) benchmarks/render.py

clean:
	rm -rf $(VENV) .topicstreams *.egg-info build
