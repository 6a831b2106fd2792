"""Hooks and fixtures shared by every test; the helpers are in tests/support."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

#: proxy variables of the shell that runs the tests (say, the README's hand crawl exported
#: http_proxy): the tests reach only the loopback servers they start, and the tests that need
#: a proxy set their own
PROXY_VARIABLES = ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy",
                   "ALL_PROXY")


def pytest_configure(config: pytest.Config) -> None:
    """Before any fixture starts a server or a subprocess (each inherits the environment)."""
    for name in PROXY_VARIABLES:
        os.environ.pop(name, None)


UNIT = Path(__file__).resolve().parent / "unit"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark the unit tests, so that ``-m "unit or third_party"`` selects the Scrapy matrix's."""
    for item in items:
        if UNIT in Path(str(item.path)).parents:
            item.add_marker(pytest.mark.unit)


@pytest.fixture
def proxy_to(monkeypatch):
    """Point http_proxy at a focuscrawl.demo.webserver so *.test host names resolve to it."""

    def use(server: Any) -> None:
        monkeypatch.setenv("http_proxy", server.proxy_url)
        monkeypatch.setenv("https_proxy", server.proxy_url)
        monkeypatch.delenv("no_proxy", raising=False)
        monkeypatch.delenv("NO_PROXY", raising=False)

    return use
