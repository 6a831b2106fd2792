"""The evaluation driver end to end: record a site into a WARC through the real spider, replay
two strategies x two seeds over it through ``scrapy crawl topic``, and check the tables, the
plots, and that a replayed crawl is a deterministic function of its seed."""

from __future__ import annotations

import csv
import json
import math
import random
import re
from pathlib import Path

import numpy as np
import pytest

from focuscrawl.demo.webserver import Page, ServerProcess
from focuscrawl.evaluation import Evaluation, fetched_urls, read_crawl
from focuscrawl.evaluation.__main__ import main
from focuscrawl.evaluation.compare import (
    StrategySpec,
    TopicSpec,
    load_repository,
    plan_jobs,
    run_job,
)

HOSTS = ["alpha.test", "beta.test", "gamma.test"]
FILLER = "river stone cloud garden paper window music travel market engine".split()


def build_site(seed: int = 11) -> dict[str, dict[str, Page]]:
    """30 pages on 3 hosts: a link chain reaches every page, plus random links; about a third
    of the pages are on regular expressions, a few on databases."""
    rng = random.Random(seed)
    urls = [f"http://{h}/p{i}.html" for h in HOSTS for i in range(10)]
    site: dict[str, dict[str, Page]] = {h: {} for h in HOSTS}
    for n, url in enumerate(urls):
        words = [rng.choice(FILLER) for _ in range(60)]
        kind = rng.random()
        title = f"Page {n}"
        if kind < 0.35:
            words += ["regex"] * rng.randint(2, 14) + ["pattern", "match"] * rng.randint(1, 4)
            title = "Regex pattern notes" if rng.random() < 0.5 else title
        elif kind < 0.55:
            words += ["database", "transaction", "commit"] * rng.randint(2, 6)
        links = [urls[(n + 1) % len(urls)]] + rng.sample(urls, 3)
        anchors = " ".join(f'<a href="{u}">{"regex" if rng.random() < 0.2 else "more"}</a>'
                           for u in links)
        body = (f"<html><head><title>{title}</title></head><body><p>{' '.join(words)}</p>"
                f"{anchors}</body></html>")
        host, path = url[7:].split("/", 1)
        site[host]["/" + path] = Page(body)
    return site


SITE = build_site()
ALL_URLS = sorted(f"http://{h}{p}" for h, pages in SITE.items() for p in pages)
TOPICS = [
    {"id": "regex", "keywords": "regex pattern",
     "description": "Regular expressions: regex pattern syntax and how a pattern will match text",
     "seeds": ["http://alpha.test/p0.html"],
     "targets": [u for u in ALL_URLS if "regex" in SITE[u[7:].split("/")[0]]
                 ["/" + u[7:].split("/", 1)[1]].body][:5]},
    {"id": "db", "keywords": "database transaction",
     "description": "Database transaction commit and rollback",
     "seeds": ["http://beta.test/p3.html", "http://gamma.test/p0.html"], "targets": []},
]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> dict:
    """The site recorded once through the real spider and a proxy, plus the server's log."""
    tmp = tmp_path_factory.mktemp("compare")
    warc = tmp / "repo.warc.gz"
    with ServerProcess(pages=SITE) as server:
        seeds = ",".join(f"http://{h}/p0.html" for h in HOSTS)
        args = ["record", "--seeds", seeds, "--out", str(warc), "--proxy", server.proxy_url,
                "--delay", "0.05"]
        assert main(args) == 0
        served = server.read_log()
        assert main(args) == 0  # cached: nothing crawled again
        assert len(server.read_log()) == len(served)
    return {"warc": warc, "served": served, "tmp": tmp}


def test_record_builds_a_complete_repository(recorded) -> None:
    warc = recorded["warc"]
    info = json.loads(Path(f"{warc}.json").read_text())
    assert info["pages"] == len(ALL_URLS)
    repo = load_repository(warc)
    assert sorted(repo.urls) == ALL_URLS
    # the recording crawl was polite: robots.txt first on every host, one request at a time
    # (the server's log), and never two starts to one server closer than the 0.05 s asked, as
    # the crawler's own clock saw them (its stats, in the log kept beside the WARC): arrival
    # times at the server jitter on a loaded machine (0.035 s gaps were seen, between a
    # robots.txt and the first page), the crawler's starts do not
    served = recorded["served"]
    for host in HOSTS:
        rows = [r for r in served if r["host"] == host]
        assert rows[0]["path"] == "/robots.txt"
        assert max(r["inflight_host"] for r in rows) == 1
    found = re.search(r"'focus/politeness/min_start_gap': ([0-9.]+)",
                      Path(f"{warc}.log").read_text("utf-8"))
    assert found is not None
    assert float(found.group(1)) >= 0.05 - 0.001  # clock resolution


def test_compare_two_strategies_two_seeds(recorded, tmp_path, capsys) -> None:
    topics = tmp_path / "topics.json"
    topics.write_text(json.dumps(TOPICS))
    out = tmp_path / "out"
    strategies = ["breadth-first", "best-n-first:n=4"]
    args = ["compare", "--replay", str(recorded["warc"]), "--topics", str(topics),
            "--strategies", *strategies, "--seeds", "3", "7", "--max-pages", "20",
            "--out", str(out)]
    assert main(args) == 0
    printed = capsys.readouterr()
    assert "best-n-first:n=4" in printed.out and "lex@100" in printed.out
    assert "[6/6]" in printed.err  # progress: breadth-first once per topic, Best-N per seed

    runs = list(csv.DictReader(open(out / "runs.csv")))
    assert len(runs) == len(TOPICS) * len(strategies) * 2
    by = {(r["topic"], r["strategy"], int(r["seed"])): r for r in runs}
    for t in TOPICS:
        bf3, bf7 = by[(t["id"], "breadth-first", 3)], by[(t["id"], "breadth-first", 7)]
        assert bf3["reused"] == "0" and bf7["reused"] == "1"
        assert {k: v for k, v in bf3.items() if k not in ("seed", "reused")} == \
               {k: v for k, v in bf7.items() if k not in ("seed", "reused")}
    for r in runs:
        assert 1 <= float(r["pages"]) <= 20 and float(r["unknown"]) == 0

    # every number of a run is the Evaluation of its crawl file
    repo = load_repository(recorded["warc"])
    t = TOPICS[0]
    crawl = out / "crawls" / "default" / "regex" / "best-n-first_n_4" / "seed7.jsonl"
    urls = fetched_urls(read_crawl(crawl))
    ev = Evaluation(repo, t["keywords"], t["description"])
    row = by[("regex", "best-n-first:n=4", 7)]
    assert float(row["pages"]) == len(urls)
    assert float(row["harvest"]) == pytest.approx(ev.harvest_rate(urls)[-1], abs=1e-5)
    assert float(row["hot_pct"]) == pytest.approx(ev.hot_coverage(urls)[-1], abs=1e-4)
    assert float(row["recall"]) == pytest.approx(ev.target_recall(urls, t["targets"])[-1],
                                                 abs=1e-5)
    cov = ev.static_coverage(urls, "linkage")
    assert float(row["static_linkage_500"]) == pytest.approx(cov[-1], abs=1e-4)

    # the summary is the mean over topics of each topic's mean over seeds, with its s.e.
    summary = {r["strategy"]: r for r in csv.DictReader(open(out / "summary.csv"))}
    results = json.loads((out / "results.json").read_text())
    for s in strategies:
        per_topic = [np.mean([float(by[(tp["id"], s, seed)]["recall"]) for seed in (3, 7)])
                     for tp in TOPICS if tp["targets"]]
        per_topic_h = [np.mean([float(by[(tp["id"], s, seed)]["harvest_hot"])
                                for seed in (3, 7)]) for tp in TOPICS]
        assert float(summary[s]["harvest_hot_mean"]) == pytest.approx(np.mean(per_topic_h))
        se = np.std(per_topic_h, ddof=1) / math.sqrt(len(per_topic_h))
        assert float(summary[s]["harvest_hot_se"]) == pytest.approx(se, abs=1e-6)
        assert float(summary[s]["recall_mean"]) == pytest.approx(np.mean(per_topic), abs=1e-6)
        js = next(r for r in results["summary"] if r["strategy"] == s)
        assert js["metrics"]["harvest_hot"]["mean"] == pytest.approx(np.mean(per_topic_h))
        curves = results["curves"]["default"][s]
        assert len(curves["hot_pct"]["mean"]) == 20
        assert curves["hot_pct"]["mean"][-1] == pytest.approx(
            float(summary[s]["hot_pct_mean"]), abs=1e-3)
        assert len(curves["static_lexical"]["mean"]) == len(ALL_URLS)
    for name in ("pant_default", "recall_default", "cho_default"):
        png = Path(results["files"][name])
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000

    # run again: every crawl is reused (same command line), the tables are the same
    assert main(args) == 0
    assert "cached" in capsys.readouterr().err
    assert list(csv.DictReader(open(out / "runs.csv"))) == runs


def test_replayed_crawl_is_deterministic_for_a_seed(recorded, tmp_path) -> None:
    """Issue 5: a replayed crawl run twice with the same seed has the same fetch order."""
    topic = TopicSpec.from_dict(TOPICS[0])
    spec = StrategySpec.parse("best-n-first:n=4")

    def order(seed: int, where: str) -> list[str]:
        (job,) = plan_jobs({"t": [topic]}, [spec], replay=recorded["warc"],
                           out_dir=tmp_path / where, seeds=[seed], max_pages=25)
        rows = read_crawl(run_job(job).out)
        assert [r["order"] for r in rows] == sorted(r["order"] for r in rows)
        return fetched_urls(rows)

    first = order(5, "a")
    assert len(first) >= 15
    assert order(5, "b") == first
    assert order(6, "c") != first  # and the seed is what changes it
