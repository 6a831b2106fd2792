#!/usr/bin/env bash
# Runs the whole test suite, installing what is missing first: ruff, then pytest with mypy and
# the docs site's strict build beside it.
#
# The tests spend most of their time waiting on what they start (loopback web servers,
# redis-server, Scrapyd, Chromium, `scrapy crawl` subprocesses, politeness delays), so they run
# in 8 pytest-xdist worker processes, even on 2 cores: the waits overlap (with 4 the suite used
# about one core), and on a machine shared with a CPU-bound process the suite still gets most
# of the CPU.  "worksteal" starts each worker on a contiguous part of the suite (a module's
# fixtures mostly built once) and lets an idle worker take tests from a busy one.  mypy and
# mkdocs use the CPU those waits leave; their output is shown only if they fail.  Arguments
# are passed on to pytest: `-n 0` runs in one process.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/ruff check .
checks=$(mktemp -d)
trap 'rm -rf "$checks"' EXIT
# the type checker over the whole package and the spiders (pyproject.toml [tool.mypy])
.venv/bin/mypy focuscrawl spiders >"$checks/mypy.log" 2>&1 &
mypy=$!
# the docs site must build without a broken link or anchor (not --quiet: that hides the
# warnings --strict counts)
.venv/bin/mkdocs build --strict --site-dir "$checks/site" >"$checks/mkdocs.log" 2>&1 &
mkdocs=$!
status=0
.venv/bin/python -m pytest -n 8 --dist worksteal "$@" || status=$?
if ! wait $mypy; then
    cat "$checks/mypy.log"
    echo "test: mypy focuscrawl spiders found errors"
    status=1
fi
if ! wait $mkdocs; then
    cat "$checks/mkdocs.log"
    echo "test: mkdocs build --strict failed (docs/, mkdocs.yml)"
    status=1
fi
exit $status
