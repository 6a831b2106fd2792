"""Link models in a polite replay: how far a plain regression over a link's own evidence
orders a polite crawl, online or trained with hindsight, against best-first and the oracles.

    .venv/bin/python bench/link_ceiling.py [--seconds 120 | --pages 500] [--delay 1.0]
        [--tasks examples neighbors] [--topic-defs bench/heldout.def.json]
        [--shares 0.5 0.06] [--out results.json]

Offline, on docweb's corpus graph, with the polite replay of ``bench/live_focus.py --seconds``
(``polite_crawl``: each server gives one page a ``--delay``, at every tick the best page waiting
on each server is taken, no latency).  Per topic and task, the replay is ordered by:

- the **oracle**: each page's judged relevance (docweb's, what the crawl is judged by);
- the **keyword oracle**: each page's keyword cosine (known only after fetching it);
- **best-first**: the best keyword cosine among the fetched pages that link to it (Pant's, as
  the crawler's best-first keeps it);
- **online link models**: a logistic regression (scikit-learn) over what a crawl can know of a
  link before fetching it: its URL's words and host (hashed), the target's title standing in
  for the link's anchor text (``+title``), and the best keyword cosine among the fetched pages
  linking to it; fitted every 5 ticks to the pages the replay has fetched, labelled by the
  crawler's own rule (keyword cosine at least ``FOCUS_RELEVANT_SCORE``'s default, 0.1) or by
  docweb's judgement (what a perfect page classifier would say), best-first until then;
- **link models trained with hindsight**: the same regression (the linking pages' cosine taken
  over all of them) trained on a random share (``--shares``) of the corpus's pages with either
  label, each page valued by a model that did not see its label (cross-fitted).  A crawl of
  120 s fetches about 1,000 pages, 6% of the corpus.
- with ``--inlinks CACHE`` (the corpus as ``bench/inlink_evidence.py --cache`` parses it: every
  link's anchor text and context), two fixed values that know **every in-link** of a page, as if
  every page linking there had been fetched: the best keyword cosine among them (best-first
  with hindsight), and **the learned order's prior** (its untrained model: ``DENSE_PRIOR`` and
  ``PRIOR_BIAS`` over the crawler's own link features, the keywords projected onto the link's
  words by ``PROFILE_SCALES``, log(in-links)), the best over a page's in-links.  What the
  order's link evidence is worth before it learns anything, and at most, since a crawl knows
  only the links of the pages it fetched.  ``--no-regressions`` leaves the regressions out.

Printed: the relevant pages (judge score >= 0.15, seeds excluded) each order finds in
``--seconds``, summed over the topics, and as a ratio of best-first's in the same replay.
Analysis only: the crawler never reads the judgements.
"""

from __future__ import annotations

import argparse
import json
import pickle
import sys
import zlib
from collections import Counter
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import numpy as np
import scipy.sparse as sp
from sklearn.linear_model import LogisticRegression

ROOT = Path(__file__).resolve().parent.parent
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

from harvest import (Oracle, _count, data_dir, docweb_data, docweb_dir,  # noqa: E402, I001
                     polite_crawl, topics_from)
from live_focus import TASKS, _seeds  # noqa: E402

from focuscrawl import config  # noqa: E402
from focuscrawl.core.learned.defaults import (DENSE_PRIOR, PART_NAMES, PRIOR_BIAS,  # noqa: E402
                                              PROFILE_SCALES)
from focuscrawl.core.learned.features import LinkFeaturizer, url_tokens  # noqa: E402
from focuscrawl.core.learned.model import LinkModel  # noqa: E402
from focuscrawl.core.learned.profile import TopicProfile  # noqa: E402
from focuscrawl.core.relevance import tokenize  # noqa: E402

THRESHOLD = 0.15  # docweb's relevant pages, as simulate.py counts them
BITS = 18


def hashed(rows: list[list[str]]) -> sp.csr_matrix:
    """Rows of tokens as hashed 0/1 columns, each row scaled to unit length."""
    r, c = [], []
    for i, tokens in enumerate(rows):
        for token in set(tokens):
            r.append(i)
            c.append(zlib.crc32(token.encode()) & ((1 << BITS) - 1))
    m = sp.csr_matrix((np.ones(len(r)), (r, c)), shape=(len(rows), 1 << BITS))
    norm = np.sqrt(np.asarray(m.sum(axis=1)).ravel())
    norm[norm == 0] = 1.0
    return sp.csr_matrix(sp.diags(1.0 / norm) @ m)


def cross_fitted(x: sp.csr_matrix, labels: np.ndarray, share: float, seed: int) -> np.ndarray:
    """Each page's probability by a model trained on a random ``share`` of the pages that does
    not include it (two fits, each predicting the pages it did not see)."""
    draw = np.random.default_rng(seed).random(len(labels))
    if share >= 0.5:
        splits = [(draw < 0.5, draw >= 0.5), (draw >= 0.5, draw < 0.5)]
    else:
        splits = [(draw < share, draw >= share), (draw >= 1 - share, draw < 1 - share)]
    prob = np.zeros(len(labels))
    for train, test in splits:
        if labels[train].all() or not labels[train].any():
            continue  # one class only: no model, those pages keep 0
        model = LogisticRegression(C=4.0, solver="liblinear", class_weight="balanced")
        prob[test] = model.fit(x[train], labels[train]).predict_proba(x[test])[:, 1]
    return prob


def online_crawl(words: sp.csr_matrix, labels: np.ndarray, kw: np.ndarray, seeds: list[int],
                 graph: list[list[int]], hosts: list[str], ticks: int, blocked: set[int],
                 refit: int = 5) -> list[int]:
    """A polite crawl that learns as it goes, from its own pages only: every ``refit`` ticks a
    logistic regression over the fetched pages' ``words`` and the best keyword cosine of their
    fetched parents is fitted to their ``labels`` and re-values every waiting page (new pages
    are valued by it as they are found); until it has seen both labels (never, with labels all
    False), best-first's value: the best keyword cosine among the fetched pages linking there."""
    n = len(hosts)
    seen: set[int] = set()
    waiting: dict[str, list[int]] = {}
    parent_kw = np.zeros(n)  # the best keyword cosine among the fetched pages linking here
    value = np.zeros(n)
    fetched: list[int] = []
    model: LogisticRegression | None = None

    def rows(pages: list[int]) -> sp.csr_matrix:
        return sp.hstack([words[pages], sp.csr_matrix(parent_kw[pages][:, None])]).tocsr()

    for s in seeds:
        if s not in seen:
            seen.add(s)
            waiting.setdefault(hosts[s], []).append(s)
            value[s] = 2.0  # the user's start pages first
    for tick in range(ticks):
        got = []
        for queue in waiting.values():
            if queue:
                best = int(np.argmax(value[queue]))
                queue[best], queue[-1] = queue[-1], queue[best]
                got.append(queue.pop())
        if not got:
            break
        fetched.extend(got)
        found: list[int] = []  # pages to value now: new ones (all of them without a model)
        for page in got:
            for child in graph[page]:
                parent_kw[child] = max(parent_kw[child], kw[page])
                if child not in seen and child not in blocked:
                    seen.add(child)
                    waiting.setdefault(hosts[child], []).append(child)
                    found.append(child)
                elif model is None:
                    found.append(child)  # best-first: a better parent raises a waiting page
        if (tick + 1) % refit == 0:
            known = labels[fetched]
            if known.any() and not known.all():
                model = LogisticRegression(C=4.0, solver="liblinear", class_weight="balanced")
                model.fit(rows(fetched), known)
                found = [p for queue in waiting.values() for p in queue]
        if found:
            value[found] = (parent_kw[found] if model is None
                            else model.predict_proba(rows(found))[:, 1])
    return fetched


def prior_values(keywords: str, labels: np.ndarray, links: list[list[tuple[int, str, str]]],
                 urls: list[str], hosts: list[str]) -> np.ndarray:
    """Per page, with every in-link known: the learned order's prior logit (its model before
    any training: ``LinkModel`` with ``DENSE_PRIOR``) of its best in-link, ``labels`` being the
    pages' keyword labels.  Of the dynamic columns only log(in-links) is known offline."""
    profile = TopicProfile(keywords)
    featurizer = LinkFeaturizer(profile.topic.phrases)
    extra = featurizer.project(profile.weights, PROFILE_SCALES)
    model = LinkModel(featurizer.dim, DENSE_PRIOR, bias=PRIOR_BIAS)
    inlinks = PART_NAMES.index("inlinks")
    grand = np.array([max((labels[s] for s, _, _ in page_links), default=0.0)
                      for page_links in links])
    prior = np.full(len(urls), -np.inf)
    for page, page_links in enumerate(links):
        if not page_links:
            continue
        rows, hashed = np.zeros((len(page_links), len(PART_NAMES))), np.zeros(len(page_links))
        rows[:, inlinks] = np.log(len({s for s, _, _ in page_links}))
        for i, (source, anchor, context) in enumerate(page_links):
            cols, vals, dense = featurizer.link(
                urls[page], hosts[page], anchor=anchor, context=context,
                parent_host=hosts[source], parent=float(labels[source]),
                grandparent=float(grand[source]))
            rows[i, :len(dense)] = dense
            hashed[i] = extra[cols] @ np.array(vals)  # w is 0 before any training
        prior[page] = float(model.logits(hashed, rows).max())
    return prior


class Corpus:
    """docweb's corpus graph and the link evidence the models read, made once."""

    def __init__(self, inlinks_cache: Path | None = None) -> None:
        self.oracle = oracle = Oracle(docweb_dir())
        urls = oracle.urls
        self.hosts = [urlsplit(u).hostname or "" for u in urls]
        self.inlinks: list[list[int]] = [[] for _ in urls]
        for page, children in enumerate(oracle.graph):
            for child in children:
                self.inlinks[child].append(page)
        self.url_words = hashed([[f"u:{w}" for w in url_tokens(u)] + [f"h:{self.hosts[i]}"]
                                 for i, u in enumerate(urls)])
        self.title_words = hashed([[f"t:{w}" for w in tokenize(t or "")]
                                   for t in oracle.titles])
        self.keyword_rule = float(config.default("FOCUS_RELEVANT_SCORE"))
        self.links: list[list[tuple[int, str, str]]] | None = None
        if inlinks_cache is not None:
            parsed = pickle.loads(inlinks_cache.read_bytes())
            assert parsed["urls"] == urls, "the cache parsed another corpus"
            self.links = parsed["inlinks"]

    def replays(self, topic: dict, task: str, ticks: int, shares: list[float],
                pages: int | None = None, regressions: bool = True) -> dict[str, int]:
        """Relevant pages each order finds from ``topic``'s seeds for ``task`` in ``ticks``
        (or in its first ``pages`` pages)."""
        oracle, n = self.oracle, len(self.oracle.urls)
        seeds = _seeds(topic, task)
        judged = np.zeros(n)
        for i, s in topic["ranking"]:
            judged[i] = s
        relevant = {oracle.urls[i] for i in np.flatnonzero(judged >= THRESHOLD)}
        kw = np.array([oracle.sim.cosine_kw(topic["keywords"], t) for t in oracle.texts])
        best_parent = np.array([max((kw[q] for q in self.inlinks[i]), default=0.0)
                                for i in range(n)])[:, None]
        evidence = {"URL": sp.hstack([self.url_words, best_parent]).tocsr(),
                    "URL+title": sp.hstack([self.url_words, self.title_words,
                                            best_parent]).tocsr()}
        starts = [oracle.idx[s] for s in seeds]
        found: dict[str, int] = {}

        def count(order: list[int]) -> int:
            order = order[:pages]
            return _count([oracle.urls[i] for i in order], relevant, seeds, [len(order)])[0]

        def replay(name: str, value: Any) -> None:
            found[name] = count(polite_crawl(value, starts, oracle.graph, self.hosts, ticks,
                                             oracle.blocked))

        def learning(words: sp.csr_matrix, labels: np.ndarray) -> int:
            return count(online_crawl(words, labels, kw, starts, oracle.graph, self.hosts,
                                      ticks, oracle.blocked))

        replay("oracle", lambda page: judged[page])
        replay("keyword oracle", lambda page: kw[page])
        found["best-first"] = learning(self.url_words, np.zeros(n, dtype=bool))  # never fits
        if self.links is not None:
            prior = prior_values(topic["keywords"], np.minimum(1.0, kw / self.keyword_rule),
                                 self.links, oracle.urls, self.hosts)
            replay("hindsight: best-first (every parent)", lambda page: best_parent[page, 0])
            replay("hindsight: the learned order's prior", lambda page: prior[page])
        if not regressions:
            return found
        for labels_by, labels in (("keywords", kw >= self.keyword_rule),
                                  ("judged", judged >= THRESHOLD)):
            for what, words in (("URL", self.url_words),
                                ("URL+title", sp.hstack([self.url_words,
                                                         self.title_words]).tocsr())):
                found[f"online {what}, its pages labelled by {labels_by}"] = learning(words,
                                                                                      labels)
        seed = zlib.crc32(topic["id"].encode())
        for share in shares:
            for labels_by, labels in (("judged", judged >= THRESHOLD),
                                      ("keywords", kw >= self.keyword_rule)):
                for what, x in evidence.items():
                    prob = cross_fitted(x, labels, share, seed)
                    replay(f"hindsight {what}, {share:.0%} labelled by {labels_by}",
                           lambda page, prob=prob: prob[page])
        return found


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seconds", type=float, default=120.0)
    p.add_argument("--delay", type=float, default=1.0)
    p.add_argument("--tasks", nargs="+", choices=list(TASKS), default=list(TASKS))
    p.add_argument("--topic-defs", type=Path, help="topics of one's own (docweb's topics.py)")
    p.add_argument("--shares", nargs="+", type=float, default=[0.5, 0.06],
                   help="shares of the corpus whose labels the link models are trained on")
    p.add_argument("--pages", type=int,
                   help="bound each replay by pages instead (ticks until it has them); the "
                        "oracle is then also docweb's sequential one (simulate.py's)")
    p.add_argument("--inlinks", type=Path, metavar="CACHE",
                   help="bench/inlink_evidence.py's parsed corpus: adds the orders that know "
                        "every in-link")
    p.add_argument("--no-regressions", action="store_true", help="leave the link models out")
    p.add_argument("--out", type=Path, help="write the figures here (JSON)")
    args = p.parse_args()

    corpus = Corpus(args.inlinks)
    topic_dir = topics_from(args.topic_defs, data_dir()) if args.topic_defs else docweb_data()
    topics = json.loads((topic_dir / "topics.json").read_text("utf-8"))["topics"]
    ticks = int(args.seconds / args.delay) + 1 if args.pages is None else args.pages
    results: dict[str, Any] = {}
    for task in args.tasks:
        total: Counter[str] = Counter()
        for topic in topics:
            found = corpus.replays(topic, task, ticks, args.shares, args.pages,
                                   not args.no_regressions)
            if args.pages:
                found["oracle, not polite"] = corpus.oracle.found(topic, _seeds(topic, task),
                                                                  [args.pages])[0]
            total.update(found)
            results[f"{task}/{topic['id']}"] = found
        base = total["best-first"]
        bound = f"{args.pages} pages" if args.pages else f"{args.seconds:g} s"
        print(f"\n{task}: relevant pages in {bound}, one page a server every "
              f"{args.delay:g} s, {len(topics)} topics")
        print(f"{'order':52s} {'relevant':>8s} {'x best-first':>12s}")
        for name, value in total.items():
            print(f"{name:52s} {value:8d} {value / base if base else 0:11.2f}x")
        results[task] = dict(total)
    if args.out:
        args.out.write_text(json.dumps({"seconds": args.seconds, "pages": args.pages,
                                        "delay": args.delay,
                                        "topic_defs": str(args.topic_defs or ""),
                                        "results": results}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
