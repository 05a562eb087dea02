# A real setup script, so that `scrapyd-deploy` (which builds with `setup.py bdist_egg`) uses the project's
# metadata and package data from pyproject.toml instead of writing a bare one of its own.
from setuptools import setup

setup()
