"""Scrapy's internals are read in one module, ``focuscrawl.seam.engine``.

Scrapy has no public API for some of what a polite scheduler needs (when to wake the engine,
what is in flight); whatever of its internals focuscrawl reads is read there, so a Scrapy
upgrade is checked in one place.
"""

from __future__ import annotations

import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "focuscrawl"
ENGINE = PACKAGE / "seam" / "engine.py"
#: reaching into the engine's private state, or through it into its parts
INTERNAL = re.compile(
    r"\._slot\b|\.engine\.(?!download_async\b)\w+|\bengine\.(scraper|downloader)\b")


def test_only_the_engine_module_reads_scrapy_internals() -> None:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path == ENGINE or "demo/site" in str(path):
            continue
        for n, line in enumerate(path.read_text("utf-8").splitlines(), 1):
            code = line.split("#", 1)[0]
            if INTERNAL.search(code) and "focuscrawl.seam.engine" not in code:
                found.append(f"{path.relative_to(PACKAGE.parent)}:{n}: {line.strip()}")
    assert found == []


def test_the_engine_module_reads_them() -> None:
    assert INTERNAL.search(ENGINE.read_text("utf-8"))
