"""The learned order's test helpers: hidden webs, a virtual crawl of a frontier over them (no
server), the frontiers the tests make."""

from __future__ import annotations

import pickle
import random
from collections import Counter

from focuscrawl.config import LearnedOptions
from focuscrawl.core.frontier import Link, QueueFrontier
from focuscrawl.core.frontier.queues import Entry
from focuscrawl.core.learned import Learned, PageDigest, learned_frontier
from focuscrawl.core.orders import LEARNED_OPTIONS, make_frontier
from focuscrawl.core.relevance import Topic, tokenize
from focuscrawl.core.urls import host

# -- a web where the topic hides behind off-topic hubs ---------------------------------------
# A portal links to 30 section hubs; each hub (off-topic itself) links to 10 pages.  Three
# sections are about glaciers: their pages say "glacier", and the hubs' links to them read
# "moraine field notes N".  The other sections' links read "tax form N", "bread recipe N", ...
# Best-first gives every page of an off-topic hub the same priority, so it finds the glacier
# pages at the rate they occur; a crawler that learns which anchor words lead to relevant pages
# goes for the "moraine" links once it has fetched a few.
TOPIC = "glacier"
OFF_TOPICS = ["tax form", "bread recipe", "train timetable", "chess opening", "garden shed",
              "violin lesson", "tide table", "paint colour", "bus route"]


def hidden_web(seed: int = 1) -> dict[str, tuple[str, str, list[tuple[str, str]]]]:
    """url -> (title, text, [(link url, anchor)])."""
    rng = random.Random(seed)
    web: dict[str, tuple[str, str, list[tuple[str, str]]]] = {}
    sections = [f"http://s{i}.test/" for i in range(30)]
    glacier = set(rng.sample(range(10, 30), 3))  # never among the portal's first links
    filler = "the of page this site section information contact about news".split()
    hubs = []
    for i, base in enumerate(sections):
        leaves = []
        subject = "moraine field notes" if i in glacier else rng.choice(OFF_TOPICS)
        for k in range(10):
            url = f"{base}p{k}.html"
            words = [rng.choice(filler) for _ in range(60)]
            if i in glacier:
                words += ["glacier"] * rng.randint(3, 8) + ["moraine", "ice", "crevasse"]
            else:
                words += subject.split() * 3
            web[url] = (f"{subject} {k}", " ".join(words), [(f"{base}index.html", "up")])
            leaves.append((url, f"{subject} {k}"))
        web[f"{base}index.html"] = (f"Section {i}", " ".join(rng.choice(filler) for _ in range(80)),
                                    leaves)
        hubs.append((f"{base}index.html", f"Section {i}"))
    web["http://portal.test/"] = ("Portal", "welcome to the portal of many sections", hubs)
    return web


def virtual_crawl(frontier, web, seeds, limit=400, snapshot_at=None, remake=None,
                  in_flight_at=None, drop_ignored=False, dropped_counted=None):
    """Fetch from the frontier, report each page as the spider does, add its links.  At
    ``snapshot_at`` pages, go on from a restored snapshot; at ``in_flight_at``, stop with a URL
    handed out and put it back, as a JOBDIR resume does; ``drop_ignored``: a link the
    frontier ignores is never added, as the topic spider drops it, nor one it only counts
    (counted instead, as the scheduler does for the spider; appended to
    ``dropped_counted``)."""
    if dropped_counted is None:
        dropped_counted = []
    topic = Topic(TOPIC)
    for s in seeds:
        frontier.add(Link(s, host=host(s), keyword=topic.mentions(s)))
    order: list[str] = []
    while len(order) < limit:
        if snapshot_at is not None and len(order) == snapshot_at:
            state = pickle.loads(pickle.dumps(frontier.snapshot()))
            frontier = remake()
            frontier.restore(state)
        if in_flight_at is not None and len(order) == in_flight_at:
            stopped = frontier.pop()
            assert stopped is not None
            state = pickle.loads(pickle.dumps(frontier.snapshot()))
            frontier = remake()
            frontier.restore(state)
            frontier.requeue(Entry.from_fields(stopped.fields()))
        entry = frontier.pop()
        if entry is None:
            break
        order.append(entry.url)
        if entry.url not in web:
            frontier.failed(entry.url)
            continue
        title, text, links = web[entry.url]
        scored = topic.score_page(title, text)
        tokens = tokenize(title) + tokenize(text)
        digest = PageDigest.from_counts(Counter(tokens), topic.hits(tokens))
        frontier.crawled(entry.url, scored.score, scored.hot, digest)
        for url, anchor in links:
            if drop_ignored and frontier.ignores(url, scored.score, entry.url):
                continue
            if drop_ignored and frontier.only_counts(url, entry.url, scored.score):
                frontier.count_inlink(url)  # as the scheduler's answer to the spider does
                dropped_counted.append(url)
                continue
            frontier.add(Link(url, host=host(url), anchor=anchor, parent=entry.url,
                              parent_score=scored.score, parent_hot=scored.hot,
                              depth=entry.depth + 1, context=f"{title} {anchor}",
                              keyword=topic.mentions(anchor) or topic.mentions(url)))
    return order


def fetches_to_find(order: list[str], targets: set[str], n: int) -> int:
    found = 0
    for i, url in enumerate(order, 1):
        found += url in targets
        if found == n:
            return i
    return len(order) + 1


def learned(**kw) -> Learned:
    return make_frontier("learned", keywords=TOPIC, learn_every=5,  # type: ignore
                         **{"examples": None, **kw})


def options(**kw) -> LearnedOptions:
    """The tests' learned options: a retrain every 5 pages, and the order deciding whether
    the seeds are examples (as these tests' orders always were)."""
    return LearnedOptions(**{"learn_every": 5, "examples": None, **kw})


def made(cls: type[Learned], **kw) -> QueueFrontier:
    """The learned frontier of ``cls`` (the learned order, or a test's variant of it) from
    make_frontier's keyword arguments: the learned ones as :func:`options`, the others as
    they are."""
    given = {k: kw.pop(k) for k in list(kw) if k in LEARNED_OPTIONS}
    order = cls(keywords=kw.pop("keywords"), options=options(**given))
    return learned_frontier(order=order, **kw)


# -- the bounded re-rank (FOCUS_LEARN_RERANK) ------------------------------------------------
# hidden_web's frontier grows to ~300 links: with a bound of 40 most re-ranks are bounded ones
# (a best 10 and a window of 30), as a 65,536 bound is on a frontier of millions
SMALL = 40


def small(**kw) -> Learned:
    """A bound of SMALL, re-ranks of SMALL links past it (unless ``rerank_batch`` says)."""
    return learned(**{"rerank_max": SMALL, "rerank_batch": SMALL, **kw})


def reference_trap(seed: int) -> dict[str, tuple[str, str, list]]:
    """A portal links to a 300-page reference manual whose every link reads "glacier reference
    k" (one page in ten says "glacier" once) and to a field station whose 20 notes are about
    glaciers under neutral anchors ("field notes k"), on another host."""
    rng = random.Random(seed)
    filler = "the of page this manual section reference function returns value".split()
    web: dict[str, tuple[str, str, list]] = {}
    for k in range(300):
        words = [rng.choice(filler) for _ in range(300)] + (["glacier"] if k % 10 == 0 else [])
        links = [(f"http://manual.test/p{rng.randrange(300)}.html", f"glacier reference {j}")
                 for j in range(6)]
        web[f"http://manual.test/p{k}.html"] = (f"Reference {k}", " ".join(words), links)
    notes = []
    for k in range(20):
        url = f"http://ice.test/n{k}.html"
        words = [rng.choice(filler) for _ in range(100)] + ["glacier"] * 5 + ["moraine"]
        web[url] = (f"Field notes {k}", " ".join(words), [("http://ice.test/", "home")])
        notes.append((url, f"field notes {k}"))
    web["http://ice.test/"] = ("Field station", "welcome to the field station", notes)
    web["http://portal.test/"] = ("Portal", "links", [
        ("http://manual.test/p0.html", "glacier manual"), ("http://ice.test/", "field station"),
        # hosts that never answer
        *((f"http://gone{k}.test/{p}", f"archive {k}{p}") for k in range(5) for p in "abc"),
    ])
    return web
