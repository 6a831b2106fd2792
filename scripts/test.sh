#!/usr/bin/env bash
# Runs the whole test suite, installing what is missing first: ruff, mypy, the docs site's
# strict build, then pytest.
#
# The tests spend most of their time waiting on what they start (loopback web servers,
# redis-server, Scrapyd, Chromium, `scrapy crawl` subprocesses, politeness delays), so they run
# in 4 pytest-xdist worker processes, even on 2 cores: the waits overlap, and on a machine
# shared with a CPU-bound process the suite still gets most of the CPU.  "worksteal" starts each
# worker on a contiguous part of the suite (a module's fixtures mostly built once) and lets an
# idle worker take tests from a busy one.  Arguments are passed on: `-n 0` runs in one process.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/ruff check .
# the type checker over the whole package and the spiders (pyproject.toml [tool.mypy])
.venv/bin/mypy focuscrawl spiders
# the docs site must build without a broken link or anchor (its log is shown only on failure;
# not --quiet: that hides the warnings --strict counts)
site=$(mktemp -d)
if ! .venv/bin/mkdocs build --strict --site-dir "$site" >"$site.log" 2>&1; then
    cat "$site.log"
    rm -rf "$site" "$site.log"
    echo "test: mkdocs build --strict failed (docs/, mkdocs.yml)"
    exit 1
fi
rm -rf "$site" "$site.log"
exec .venv/bin/python -m pytest -n 4 --dist worksteal "$@"
