#!/usr/bin/env bash
# Installs everything focuscrawl, its tests and its benchmarks need on a fresh Debian machine:
# system packages (redis-server, chromium, ...) when missing, then a virtualenv in .venv with the
# project installed in editable mode (with MkDocs, which builds docs/).  Safe to run again: it only installs what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(redis-server redis-tools chromium)  # redis-tools: redis-cli, which creates a Redis Cluster
missing=()
for pkg in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "setup: installing ${missing[*]}"
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
    echo "setup: creating .venv"
    "$PYTHON" -m venv .venv
fi
stamp=.venv/.focuscrawl-installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
    echo "setup: installing Python packages into .venv"
    # uv installs them several times faster than pip (parallel downloads and builds) into a
    # cache that the Scrapy matrix's virtualenvs (noxfile.py) then fill theirs from; pip
    # installs uv itself
    if ! { .venv/bin/python -m pip install "uv>=0.5" &&
           .venv/bin/python -m uv pip install --python .venv/bin/python \
               -e ".[test,eval,distributed,scrapyd,docs]"; } >.venv/pip.log 2>&1; then
        tail -n 30 .venv/pip.log
        echo "setup: installing the packages failed (full log: .venv/pip.log)"
        exit 1
    fi
    .venv/bin/python -c "import scrapy, numpy, sklearn, w3lib, pytest_twisted, xdist, scrapy_playwright, warcio, xxhash, mkdocs"
    touch "$stamp"
fi
# Python's bytecode, written once: uv installs without it, and where PYTHONDONTWRITEBYTECODE is
# set no process writes it, so every `scrapy crawl` (and test worker) would compile Scrapy,
# Twisted, scikit-learn and focuscrawl from source again at each start
compiled=.venv/.focuscrawl-compiled
if [ ! -f "$compiled" ] || [ "$stamp" -nt "$compiled" ]; then
    .venv/bin/python -m compileall -q -j 0 .venv/lib >/dev/null 2>&1 || true  # a test file of a package may not parse
    touch "$compiled"
fi
.venv/bin/python -m compileall -q -j 0 focuscrawl spiders settings tests bench >/dev/null
echo "setup: ready (.venv/bin/scrapy, .venv/bin/pytest)"
