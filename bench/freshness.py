"""Keeping a topic fresh: the revisit policies on the changing demo web, equal fetch budgets.

    .venv/bin/python bench/freshness.py [--days 14] [--per-day 1] [--seeds 1,2,3] [--topic regex]

The demo web's 1,031 pages change as the changing web serves them (focuscrawl.demo.changing,
the same seeds: each page's rate and change times are the ones the server would serve), here
on a simulated clock so that weeks of changes take seconds.  Every page is fetched at time 0,
then revisited for ``--days`` by the crawler's own revisit schedule
(focuscrawl.core.refresh.RevisitSchedule), at ``--per-day`` revisits per page per day on
average (the fetch budget, the same for every policy), no server more often than once every
``--delay`` seconds (politeness).  A page's weight is the crawl's: its cosine score against the
topic's keywords, as a share of FOCUS_RELEVANT_SCORE (focuscrawl.core.refresh.relevance_weight).

Policies, each in the same run:

* **ours** -- the optimal allocation (Cho & Garcia-Molina) on the rates the crawler estimates
  from what its visits saw (focuscrawl.core.refresh.estimate), relevance-weighted;
* **uniform** -- every page as often;
* **proportional** -- each page as often as its estimated rate;
* **oracle** -- the optimal allocation on the true rates, which no crawler knows: the optimum.
  ``analytic`` is the freshness that allocation predicts in the fluid model (no politeness
  slots, exact periods).

Printed per policy: relevance-weighted time-averaged freshness (exact, from the true change
times), the unweighted one, revisits made, revisits that found no change, fetch slots left
unused; then ours / oracle and ours / uniform.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from focuscrawl import config  # noqa: E402
from focuscrawl.core.extract import extract  # noqa: E402
from focuscrawl.core.refresh import RateEstimator, RevisitSchedule, allocate  # noqa: E402
from focuscrawl.core.refresh.freshness import weighted_freshness  # noqa: E402
from focuscrawl.core.refresh.schedule import relevance_weight  # noqa: E402
from focuscrawl.core.refresh.simulate import simulate  # noqa: E402
from focuscrawl.core.relevance import Topic  # noqa: E402
from focuscrawl.demo import TOPICS, ensure_site  # noqa: E402
from focuscrawl.demo.changing import DAY, ChangeConfig, ChangingWeb  # noqa: E402

POLICIES = ("ours", "uniform", "proportional", "oracle")


def site_pages(topic: Topic) -> dict[str, float]:
    """Every HTML page of the demo web -> its weight for ``topic``."""
    relevant = config.default("FOCUS_RELEVANT_SCORE")
    weights = {}
    site = ensure_site()
    for path in sorted(site.glob("*/**/*.html")):
        rel = path.relative_to(site)
        url = f"http://{rel.parts[0]}/{'/'.join(rel.parts[1:])}"
        page = extract(path.read_text("utf-8", "replace"), url, with_context=False)
        weights[url] = relevance_weight(topic.score_page(page.title, page.text).score, relevant)
    return weights


def run(seed: int, weights: dict[str, float], days: float, per_day: float, delay: float,
        ) -> dict[str, dict[str, float]]:
    web = ChangingWeb(ChangeConfig(seed=seed, speed=1.0, gone=0.0), start=0.0)
    duration = days * DAY
    truth = {url: web.page(url) for url in weights}
    changes = {url: clock.changed_before(duration) for url, clock in truth.items()}
    budget = len(weights) * per_day / DAY
    prior = 1 / DAY  # the crawler's starting guess: a change a day
    schedules = {
        "ours": RevisitSchedule("optimal", RateEstimator(prior)),
        "uniform": RevisitSchedule("uniform", RateEstimator(prior)),
        "proportional": RevisitSchedule("proportional", RateEstimator(prior)),
        "oracle": RevisitSchedule("optimal", rate_of=lambda p: truth[p.url].rate),
    }
    ones = dict.fromkeys(weights, 1.0)
    out: dict[str, dict[str, float]] = {}
    for name, schedule in schedules.items():
        t0 = time.perf_counter()
        res = simulate(schedule, changes, weights, budget=budget, duration=duration,
                       delay=delay)
        out[name] = {
            "freshness": res.freshness,
            "unweighted": weighted_freshness(res.visits, changes, ones, 0.0, duration),
            "fetches": res.fetches, "unchanged": res.unchanged, "unused": res.unused,
            "seconds": time.perf_counter() - t0,
        }
    urls = list(weights)
    hosts = [u.split("/")[2] for u in urls]
    analytic = allocate("optimal", np.array([truth[u].rate for u in urls]),
                        np.array([weights[u] for u in urls]), budget, hosts,
                        {h: 1.0 / delay for h in hosts} if delay > 0 else None)
    out["analytic"] = {"freshness": analytic.expected}
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--days", type=float, default=14.0, help="simulated days of revisits")
    ap.add_argument("--per-day", type=float, default=1.0,
                    help="revisits per page per day: the fetch budget of every policy")
    ap.add_argument("--delay", type=float, default=60.0,
                    help="simulated seconds between two fetches from one server")
    ap.add_argument("--seeds", default="1,2,3", help="changing-web seeds, comma-separated")
    ap.add_argument("--topic", default="regex", help="a demo topic id (the page weights)")
    args = ap.parse_args(argv)
    topic_def = next((t for t in TOPICS if t["id"] == args.topic), None)
    if topic_def is None:
        ap.error(f"unknown demo topic {args.topic!r}: " + ", ".join(t["id"] for t in TOPICS))
    weights = site_pages(Topic(topic_def["keywords"]))
    relevant = sum(w >= 1.0 for w in weights.values())
    print(f"{len(weights)} pages ({relevant} at weight 1 for topic {args.topic!r}); "
          f"{args.days:g} days, {args.per_day:g} revisits/page/day, "
          f"one fetch per server every {args.delay:g} s")
    rows: dict[str, list[dict[str, float]]] = {}
    for seed in (int(s) for s in args.seeds.split(",")):
        result = run(seed, weights, args.days, args.per_day, args.delay)
        for name, row in result.items():
            rows.setdefault(name, []).append(row)
        print(f"seed {seed}: " + ", ".join(f"{n} {r['freshness']:.4f}"
                                           for n, r in result.items()))

    def mean(name: str, key: str) -> float:
        return float(np.mean([r[key] for r in rows[name]]))

    print(f"\n{'policy':<13}{'freshness':>10}{'unweighted':>11}{'revisits':>10}"
          f"{'no change':>11}{'share':>7}{'unused':>8}")
    for name in POLICIES:
        fetches, unchanged = mean(name, "fetches"), mean(name, "unchanged")
        print(f"{name:<13}{mean(name, 'freshness'):>10.4f}{mean(name, 'unweighted'):>11.4f}"
              f"{fetches:>10.0f}{unchanged:>11.0f}{unchanged / max(fetches, 1):>7.2f}"
              f"{mean(name, 'unused'):>8.0f}")
    print(f"{'analytic':<13}{mean('analytic', 'freshness'):>10.4f}")
    ours = mean("ours", "freshness")
    print(f"\nours / oracle  {ours / mean('oracle', 'freshness'):.3f}   (goal >= 0.9)")
    print(f"ours / analytic optimum  {ours / mean('analytic', 'freshness'):.3f}")
    print(f"ours / uniform  {ours / mean('uniform', 'freshness'):.3f}   (goal > 1)")
    print(f"ours / proportional  {ours / mean('proportional', 'freshness'):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
