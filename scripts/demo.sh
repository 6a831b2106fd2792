#!/usr/bin/env bash
# The quick start: install what is missing, serve the bundled demo web on 127.0.0.1, run a
# focused crawl of it, then a breadth-first crawl of the same budget on the same web, and write
# a report with both harvest curves in one picture (output/demo-report.html); the text report
# ends with the opening lines of the best page's main text (each page's content, -a content).
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

# The focused crawl's live dashboard, on a free loopback port (DEMO_LINGER=30 keeps it up 30 s
# after the crawl ends, to look around).
dash_port=$(.venv/bin/python -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
FOCUSED_SETTINGS=(-s "FOCUS_DASHBOARD=127.0.0.1:$dash_port" -s "FOCUS_DASHBOARD_LINGER=${DEMO_LINGER:-0}")
echo "demo: watch the focused crawl live at http://127.0.0.1:$dash_port/"

export http_proxy=$proxy https_proxy=$proxy
crawl() {  # crawl STRATEGY OUTPUT [scrapy options...]
    local strategy=$1 out=$2
    shift 2
    .venv/bin/scrapy crawl topic -a keywords="$KEYWORDS" -a seeds="$seeds" \
        -a strategy="$strategy" -a max_pages="$MAX_PAGES" \
        -s FOCUS_DELAY=0.05 -s LOG_LEVEL=WARNING -O "$out" "$@"
}
crawl "$STRATEGY" output/demo.jsonl ${FOCUSED_SETTINGS[@]+"${FOCUSED_SETTINGS[@]}"}
echo "demo: the same budget breadth-first, to compare with"
crawl breadth-first output/demo-breadth-first.jsonl

echo
.venv/bin/python -m focuscrawl.evaluation.report output/demo.jsonl --relevant 0.1 \
    --label "focused ($STRATEGY)" --compare output/demo-breadth-first.jsonl \
    --compare-label breadth-first --html output/demo-report.html
echo
echo "demo: the pages are in output/demo.jsonl (one JSON object per line), the breadth-first"
echo "demo: crawl's in output/demo-breadth-first.jsonl; the server's access log is"
echo "demo: output/demo-access.log; open output/demo-report.html for the pictures"
