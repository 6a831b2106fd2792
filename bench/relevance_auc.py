"""The page classifier's ``relevance`` against docweb's judgements, beside the keyword ``score``.

    .venv/bin/python bench/relevance_auc.py [--pages 1000] [--topics TOPICS_JSON]

Offline, on docweb's corpus (``$DOCWEB_DATA`` or ``~/.cache/docweb``): per topic, the pages a
crawl might see (breadth-first over the corpus's links from the topic's seeds, ``--pages`` of
them) are scored as the spider scores them (keyword cosine) and passed in that order through
the spider's :class:`PageClassifier` (each page's probability by the model before it, as in a
crawl), with the seeds' example pages as positive examples ("examples") or none (self-training
from the keywords alone, "keywords").  Prints each one's AUC against docweb's relevant pages
(judge score >= its threshold) and the classifier's agreement with the keyword rule.  Analysis
only: the crawler never reads the judgements.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import sys
import time
from collections import Counter, deque
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from focuscrawl import config  # noqa: E402
from focuscrawl.core.classifier import PageClassifier  # noqa: E402
from focuscrawl.core.learned import PageDigest  # noqa: E402
from focuscrawl.core.relevance import Topic, tokenize  # noqa: E402
from focuscrawl.seam.examples import NEGATIVE_SHARE  # noqa: E402


def auc(values: list[float], relevant: list[bool]) -> float:
    """Mann-Whitney: the chance a relevant page outranks an irrelevant one (ties: half)."""
    pairs = sorted(zip(values, relevant, strict=True))
    pos = sum(relevant)
    neg = len(relevant) - pos
    if not pos or not neg:
        return float("nan")
    rank_sum, i = 0.0, 0
    while i < len(pairs):
        j = i
        while j < len(pairs) and pairs[j][0] == pairs[i][0]:
            j += 1
        mid = (i + j + 1) / 2  # ranks are 1-based
        rank_sum += mid * sum(1 for k in range(i, j) if pairs[k][1])
        i = j
    return (rank_sum - pos * (pos + 1) / 2) / (pos * neg)


def main() -> None:
    data = Path(os.environ.get("DOCWEB_DATA") or Path.home() / ".cache" / "docweb")
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--pages", type=int, default=1000)
    p.add_argument("--topics", type=Path, default=data / "topics.json")
    p.add_argument("--corpus", type=Path, default=data / "corpus.jsonl.gz")
    args = p.parse_args()
    truth = json.loads(args.topics.read_text())
    urls = truth["urls"]
    threshold = truth["method"]["relevant_threshold"]
    pages: dict[str, tuple[list[str], list[str], list[str]]] = {}
    with gzip.open(args.corpus, "rt", encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            links = d["outlinks"] if isinstance(d["outlinks"], list) else []
            pages[d["url"]] = (tokenize(d["title"] or ""), tokenize(d["text"] or ""), links)
    relevant_score = config.default("FOCUS_RELEVANT_SCORE")
    print("topic | pages | relevant | AUC score | AUC relevance (examples) | "
          "AUC relevance (keywords) | agreement (keywords) | us/page")
    for topic in truth["topics"]:
        judged = {urls[i] for i, s in topic["ranking"] if s >= threshold}
        seeds = [u for u in topic["seeds"]["from_examples"] if u in pages]
        order, seen, queue = [], set(seeds), deque(seeds)
        while queue and len(order) < args.pages:  # breadth-first over the corpus's links
            url = queue.popleft()
            order.append(url)
            for link in pages[url][2]:
                if link in pages and link not in seen:
                    seen.add(link)
                    queue.append(link)
        kw = Topic(topic["keywords"])
        digests = {u: PageDigest.from_counts(Counter(pages[u][0] + pages[u][1]))
                   for u in order}
        scores = [kw.score_tokens(pages[u][0], pages[u][1]).score for u in order]
        rel = [u in judged for u in order]
        row = [topic["id"], len(order), sum(rel), f"{auc(scores, rel):.3f}"]
        agreement, cost = "", 0.0
        for with_examples in (True, False):
            c = PageClassifier(positive_score=relevant_score,
                               negative_score=relevant_score * NEGATIVE_SHARE)
            if with_examples:
                for u in seeds:
                    c.add_example(c.features(digests[u].terms), True)
            start = time.perf_counter()
            probs = []
            for u, s in zip(order, scores, strict=True):
                p_ = c.observe(c.features(digests[u].terms), s)
                probs.append(-1.0 if p_ is None else p_)
            cost = (time.perf_counter() - start) / len(order) * 1e6
            row.append(f"{auc(probs, rel):.3f}")
            agreement = f"{c.agreement or 0:.3f}"
        print(" | ".join(str(x) for x in [*row, agreement, f"{cost:.0f}"]), flush=True)


if __name__ == "__main__":
    main()
