#!/usr/bin/env bash
# The quick start: install what is missing, serve the bundled demo web on 127.0.0.1, run a
# focused crawl of it, and say where the JSON lines are and what harvest rate the crawl reached.
#
#   bash scripts/demo.sh ["keywords"] [strategy] [max_pages]
set -euo pipefail
cd "$(dirname "$0")/.."
KEYWORDS=${1:-"regular expressions, regex"}
STRATEGY=${2:-learned}
MAX_PAGES=${3:-150}

bash scripts/setup.sh
mkdir -p output
serve_out=$(mktemp)
.venv/bin/python -m focuscrawl.demo serve --port 0 --log output/demo-access.log >"$serve_out" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true; rm -f "$serve_out"' EXIT
for _ in $(seq 100); do  # the server prints its address once it listens
    grep -q "^Serving" "$serve_out" && break
    kill -0 $server 2>/dev/null || { cat "$serve_out"; exit 1; }
    sleep 0.1
done
proxy=$(grep -o "http://127.0.0.1:[0-9]*" "$serve_out" | head -n 1)
[ -n "$proxy" ] || { echo "demo: the demo web did not start"; cat "$serve_out"; exit 1; }
seeds=$(.venv/bin/python -m focuscrawl.demo seeds | paste -sd, -)
echo "demo: demo web on $proxy; crawling for \"$KEYWORDS\" with $STRATEGY, $MAX_PAGES pages"

export http_proxy=$proxy https_proxy=$proxy
.venv/bin/scrapy crawl topic -a keywords="$KEYWORDS" -a seeds="$seeds" \
    -a strategy="$STRATEGY" -a max_pages="$MAX_PAGES" \
    -s FOCUS_DELAY=0.05 -s LOG_LEVEL=WARNING -O output/demo.jsonl

echo
.venv/bin/python -m focuscrawl.evaluation.report output/demo.jsonl --relevant 0.1
echo
echo "demo: the pages are in output/demo.jsonl (one JSON object per line);"
echo "demo: the server's access log is output/demo-access.log"
