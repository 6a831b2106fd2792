"""focuscrawl: a focused (topic-driven) web crawler for Scrapy."""

#: the one place the release's version is written: pyproject.toml reads it (dynamic version),
#: the project's USER_AGENT and CHANGELOG.md name it
__version__ = "0.1.0"
