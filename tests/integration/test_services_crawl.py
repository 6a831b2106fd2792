"""The crawl command with a setting the services refuse: one line, exit status 1 (the
services themselves: tests/unit/test_services.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_a_crawl_that_cannot_start_stops_with_one_line_and_exit_1():
    """A bad setting: one line, no traceback, exit status 1 (Scrapy's own crawl command would
    too: tests/integration/test_third_party.py)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("http_proxy", None)
    proc = subprocess.run(
        [sys.executable, "-m", "scrapy", "crawl", "topic", "-a", "keywords=alpha",
         "-a", "seeds=http://127.0.0.1:9/", "-s", "FOCUS_SLACK=7", "-s", "LOG_LEVEL=ERROR",
         "-s", "FOCUS_DEFAULT_FEED="],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert proc.returncode == 1
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert "FOCUS_SLACK must be between 0 and 1" in lines[0]
