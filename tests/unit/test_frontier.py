"""The seed papers' pseudocode replayed on small hand-made link graphs: exact fetch orders."""

from __future__ import annotations

import pickle

import pytest

from focuscrawl.core.frontier import (
    Capabilities,
    Link,
    LinkGraph,
    QueueFrontier,
    ServerQueues,
    Valuation,
)
from focuscrawl.core.frontier.linkgraph import INFINITY
from focuscrawl.core.frontier.queues import Entry
from focuscrawl.core.orders import make_frontier

# A graph: page -> (score, hot, [(child, anchor)])
Graph = dict[str, tuple[float, bool, list[tuple[str, str]]]]


def virtual_crawl(frontier, graph: Graph, seeds: list[str], keyword: str = "computer",
                  limit: int = 100, snapshot_at: int | None = None, remake=None) -> list[str]:
    """Cho's virtual crawler: fetch from the frontier, report pages, add their links."""
    for s in seeds:
        frontier.add(Link(s, host=s.split("/")[0], keyword=keyword in s))
    order: list[str] = []
    while len(order) < limit:
        if snapshot_at is not None and len(order) == snapshot_at:
            state = pickle.loads(pickle.dumps(frontier.snapshot()))
            fresh = remake() if remake is not None else make_frontier(
                frontier.name, max_buffer=frontier.max_buffer,  # the batch's random state
                n=getattr(frontier.policy, "n", None),  # comes back with the snapshot
            )
            fresh.restore(state)
            frontier = fresh
        entry = frontier.pop()
        if entry is None:
            break
        order.append(entry.url)
        score, hot, links = graph.get(entry.url, (0.0, False, []))
        frontier.crawled(entry.url, score, hot)
        for child, anchor in links:
            frontier.add(Link(
                child, host=child.split("/")[0], anchor=anchor, parent=entry.url,
                parent_score=score, parent_hot=hot,
                keyword=keyword in anchor or keyword in child,
            ))
    return order


TREE: Graph = {
    "a/s": (0.0, False, [("a/1", ""), ("a/2", ""), ("a/3", "")]),
    "a/1": (0.0, False, [("a/11", ""), ("a/12", "")]),
    "a/2": (0.0, False, [("a/21", ""), ("a/1", "")]),
    "a/3": (0.0, False, []),
}


def test_breadth_first_is_fifo():
    assert virtual_crawl(make_frontier("breadth-first"), TREE, ["a/s"]) == [
        "a/s", "a/1", "a/2", "a/3", "a/11", "a/12", "a/21",
    ]


def test_breadth_first_bounded_drops_links_found_when_full():
    f = make_frontier("breadth-first", max_buffer=2)
    order = virtual_crawl(f, TREE, ["a/s"])
    # after a/s: [a/1, a/2] full, a/3 dropped; a/1 adds a/11 (room after its pop), a/12 is
    # dropped; a/2 adds a/21, and a/1 is a duplicate, not a drop
    assert order == ["a/s", "a/1", "a/2", "a/11", "a/21"]
    assert f.stats["dropped_full"] == 2


def test_cho_hot_queue_before_url_queue():
    graph: Graph = {
        "h/s": (0.0, False, [("h/a", "cooking"), ("h/b", "computer science"), ("h/c", "art")]),
        "h/a": (0.0, False, [("h/computer-lab", "lab")]),
    }
    # b's anchor names the keyword; computer-lab's URL does: both jump the url_queue
    assert virtual_crawl(make_frontier("cho"), graph, ["h/s"]) == [
        "h/s", "h/b", "h/a", "h/computer-lab", "h/c"]


PROMOTION: Graph = {
    # s links w1, w2, z (all cold).  w1 (not hot) links x1.  w2 is hot and links back to w1,
    # already crawled: x1 is now two links from a hot page and must move to hot_queue.
    "p/s": (0.0, False, [("p/w1", ""), ("p/w2", ""), ("p/z", "")]),
    "p/w1": (0.0, False, [("p/x1", "")]),
    "p/w2": (0.9, True, [("p/w1", ""), ("p/y", "")]),
    "p/x1": (0.0, False, [("p/x2", "")]),
}


def test_cho_plain_does_not_use_distance():
    assert virtual_crawl(make_frontier("cho"), PROMOTION, ["p/s"]) == [
        "p/s", "p/w1", "p/w2", "p/z", "p/x1", "p/y", "p/x2",
    ]


def test_cho_distance_promotes_through_an_already_crawled_page():
    f = make_frontier("cho-distance")
    order = virtual_crawl(f, PROMOTION, ["p/s"])
    # x1 (hot -> w1 -> x1: distance 2) is promoted before y (distance 1) is even queued
    assert order == ["p/s", "p/w1", "p/w2", "p/x1", "p/y", "p/z", "p/x2"]
    assert f.stats["promotions"] == 1
    # x2 is three links from w2: not hot by distance (limit 3 means distance < 3)
    assert f.graph.distance("p/x2") == INFINITY
    assert f.graph.distance("p/x1") == 2


def test_cho_distance_rediscovered_url_with_keyword_anchor_is_promoted():
    graph: Graph = {
        "q/s": (0.0, False, [("q/a", ""), ("q/b", ""), ("q/c", "")]),
        "q/a": (0.0, False, [("q/c", "computer")]),  # c queued cold, now seen in a hot anchor
    }
    f = make_frontier("cho-distance")
    assert virtual_crawl(f, graph, ["q/s"]) == ["q/s", "q/a", "q/c", "q/b"]
    assert f.stats["promotions"] == 1


def test_cho_reorder_by_backlinks():
    graph: Graph = {
        "r/s": (0.0, False, [("r/a", ""), ("r/b", ""), ("r/c", "")]),
        "r/a": (0.0, False, [("r/c", ""), ("r/d", "")]),
        "r/b": (0.0, False, [("r/d", ""), ("r/c", "")]),
    }
    # after a and b: c has 3 backlinks, d has 2
    assert virtual_crawl(make_frontier("cho", reorder="backlinks"), graph, ["r/s"]) == [
        "r/s", "r/a", "r/c", "r/b", "r/d",
    ]
    assert virtual_crawl(make_frontier("cho"), graph, ["r/s"]) == [
        "r/s", "r/a", "r/b", "r/c", "r/d"]


def test_cho_reorder_by_parent_score():
    graph: Graph = {
        "t/s": (0.0, False, [("t/a", ""), ("t/b", "")]),
        "t/a": (0.1, False, [("t/a1", "")]),
        "t/b": (0.7, False, [("t/b1", "")]),
    }
    # after a: a1 (parent score 0.1) beats b (parent s, 0.0) in the url_queue
    assert virtual_crawl(make_frontier("cho", reorder="score"), graph, ["t/s"]) == [
        "t/s", "t/a", "t/a1", "t/b", "t/b1",
    ]


SCORED: Graph = {
    "s/0": (0.5, False, [("s/a", ""), ("s/b", "")]),
    "s/a": (0.2, False, [("s/a1", ""), ("s/a2", "")]),
    "s/b": (0.8, False, [("s/b1", ""), ("s/a2", "")]),  # a2 seen again with a better score
    "s/b1": (0.1, False, []),
}


def test_best_first_uses_parent_score_and_keeps_the_best():
    f = make_frontier("best-n-first", n=1)
    assert f.name == "best-first"
    # a (0.5) and b (0.5) tie: FIFO.  After a: a1, a2 at 0.2; after b: b1 0.8, a2 raised to 0.8
    assert virtual_crawl(f, SCORED, ["s/0"]) == ["s/0", "s/a", "s/b", "s/a2", "s/b1", "s/a1"]


def test_eviction_of_the_minimum_at_max_buffer():
    f = make_frontier("best-n-first", n=1, max_buffer=2)
    f.add(Link("e/a", host="e", parent_score=0.5))
    f.add(Link("e/b", host="e", parent_score=0.1))
    assert f.add(Link("e/c", host="e", parent_score=0.3))
    assert not f.add(Link("e/d", host="e", parent_score=0.05))  # the new link is the minimum
    assert len(f) == 2
    assert f.stats["evicted"] == 2
    assert [f.pop().url, f.pop().url, f.pop()] == ["e/a", "e/c", None]
    # an evicted link seen again later may come back
    assert f.add(Link("e/b", host="e", parent_score=0.9))


def test_best_n_first_batch_is_a_seeded_permutation_of_the_top_n():
    def run(seed: int) -> list[str]:
        f = make_frontier("best-n-first", n=3, seed=seed)
        for i, score in enumerate([0.9, 0.1, 0.8, 0.7, 0.2, 0.3]):
            f.add(Link(f"n/{i}", host="n", parent_score=score))
        return [f.pop().url for _ in range(6)]

    order = run(7)
    assert sorted(order[:3]) == ["n/0", "n/2", "n/3"]  # the top 3 (0.9, 0.8, 0.7)
    assert sorted(order[3:]) == ["n/1", "n/4", "n/5"]
    assert order == run(7)  # reproducible
    assert len({tuple(run(s)[:3]) for s in range(12)}) > 1  # but really shuffled


def test_best_n_first_new_links_wait_for_the_next_batch():
    f = make_frontier("best-n-first", n=2, seed=1)
    f.add(Link("m/a", host="m", parent_score=0.5))
    f.add(Link("m/b", host="m", parent_score=0.4))
    f.add(Link("m/c", host="m", parent_score=0.3))
    first = f.pop().url
    f.add(Link("m/top", host="m", parent_score=0.99))  # better than the batch, but after it
    f.add(Link("m/top2", host="m", parent_score=0.98))
    second = f.pop().url
    assert {first, second} == {"m/a", "m/b"}
    assert {f.pop().url, f.pop().url} == {"m/top", "m/top2"}
    assert f.pop().url == "m/c"


def test_distiller_boosts_links_from_hubs():
    graph: Graph = {
        "d/s": (0.5, False, [("d/hub", ""), ("d/leaf", "")]),
        "d/hub": (0.3, False, [("d/h1", ""), ("d/h2", ""), ("d/h3", ""), ("d/x", "")]),
        "d/leaf": (0.3, False, [("d/l1", "")]),
        "d/h1": (0.0, False, [("d/x", "")]),
    }
    f = make_frontier("distiller", weight=0.5, every=1)
    order = virtual_crawl(f, graph, ["d/s"])
    # hub and leaf have equal scores, but hub links to many pages: its children go first
    assert order.index("d/h1") < order.index("d/l1")
    assert f.valuation.hub["d/hub"] == pytest.approx(1.0)
    best_first = virtual_crawl(make_frontier("best-n-first", n=1), graph, ["d/s"])
    assert best_first.index("d/h1") < best_first.index("d/l1")  # FIFO tie in best-first...
    graph["d/leaf"] = (0.35, False, [("d/l1", "")])
    # ...but a slightly better leaf wins in best-first, while the distiller keeps the hub first
    assert virtual_crawl(make_frontier("best-n-first", n=1), graph, ["d/s"]).index("d/l1") < \
        virtual_crawl(make_frontier("best-n-first", n=1), graph, ["d/s"]).index("d/h1")
    order = virtual_crawl(make_frontier("distiller", weight=0.5, every=1), graph, ["d/s"])
    assert order.index("d/h1") < order.index("d/l1")


@pytest.mark.parametrize("name", ["breadth-first", "cho", "cho-distance", "best-first",
                                  "best-n-first", "distiller"])
def test_snapshot_restore_continues_the_same_order(name):
    graph: Graph = {}
    for i in range(40):  # a deterministic pseudo-random graph with scores and hot pages
        links = [(f"g{(i * 7 + k * 13) % 5}/{(i * 7 + k * 13) % 41}", "computer" if k == 0 and
                  i % 5 == 0 else "") for k in range(4)]
        graph[f"g{i % 5}/{i}"] = ((i * 37 % 100) / 100, i % 6 == 0, links)

    def fresh():
        return make_frontier(name, n=4, seed=3, max_buffer=30)

    whole = virtual_crawl(fresh(), graph, ["g0/0"])
    resumed = virtual_crawl(fresh(), graph, ["g0/0"], snapshot_at=10)
    assert resumed == whole
    assert len(whole) > 15


def test_make_frontier_rejects_unknown_names():
    with pytest.raises(ValueError, match="unknown strategy"):
        make_frontier("depth-first")


def test_server_queues_best_among_ready_servers():
    q = ServerQueues()
    for i, (host, key) in enumerate([("a", 1), ("a", 2), ("b", 3), ("c", 4), ("b", 5)]):
        q.push(Entry(f"{host}/{i}", host, i), (key,))
    assert q.pop(lambda h: h != "a").url == "b/2"  # a is busy: the best of the others
    assert q.pop().url == "a/0"
    q.push(Entry("c/9", "c", 9), (0,))  # decrease-key territory: a new best for c
    assert q.pop(lambda h: h in ("b", "c")).url == "c/9"
    assert [q.pop().url for _ in range(3)] == ["a/1", "c/3", "b/4"]
    assert q.pop() is None
    assert len(q) == 0


def test_server_queues_rekey_moves_an_entry():
    q = ServerQueues()
    entries = [Entry(f"x/{i}", "x", i) for i in range(3)]
    for e in entries:
        q.push(e, (e.seq,))
    q.push(entries[2], (-1,))
    q.discard(entries[0])
    assert [q.pop().url, q.pop().url, q.pop()] == ["x/2", "x/1", None]


@pytest.mark.parametrize("round_robin", [0, 7])
def test_server_queues_drop_stale_items_when_they_outnumber_the_live_ones(round_robin):
    """Re-keying every queued URL over and over (a bounded re-rank re-keys thousands a time)
    leaves no more stale heap items than live ones, and the order is the keys' order."""
    import random

    rng = random.Random(3)
    q = ServerQueues(round_robin)
    entries = [Entry(f"h{i % 30}/{i}", f"h{i % 30}", i) for i in range(3000)]
    keys = {}
    for e in entries:
        keys[e.url] = (rng.random(), e.seq)
        q.push(e, keys[e.url])
    for _ in range(5):
        for e in rng.sample(entries, 2000):
            keys[e.url] = (rng.random(), e.seq)
            q.push(e, keys[e.url])
        items = sum(len(h.items) for h in q._queues.values())
        assert len(q) == 3000 and items - len(q) <= len(q)
    for e in entries[:100]:
        q.discard(e)
    if round_robin:
        popped = [q.pop() for _ in range(2900)]
        assert {e.url for e in popped} == {e.url for e in entries[100:]}
    else:
        popped = [q.pop().url for _ in range(2900)]
        assert popped == sorted((e.url for e in entries[100:]), key=keys.get)
    assert q.pop() is None


@pytest.mark.parametrize("round_robin", [0, 7])
def test_server_queues_rebuild_ranked_orders_as_rebuild(round_robin):
    """A re-rank that deals each server's entries into its heap only when needed
    (rebuild_ranked) hands out what a rebuild of every heap item does, through pushes,
    re-keys (some to the same key), discards, a compaction and a spill in between."""
    import random

    import numpy as np

    def run(ranked: bool) -> list:
        rng = random.Random(11)
        q = ServerQueues(round_robin)
        entries = [Entry(f"h{i % 40 if i % 3 else 0}/{i}", f"h{i % 40 if i % 3 else 0}", i)
                   for i in range(3000)]
        for e in entries:
            q.push(e, (-rng.random(), e.seq))
        out: list = []
        for rnd in range(4):
            live = [e for e in entries if e.queued]
            scores = np.array([round(rng.random(), 2) for _ in live])  # ties: seq decides
            for e, s in zip(live, scores.tolist(), strict=True):
                e.score = s
            if ranked:
                q.rebuild_ranked(live, -scores)
            else:
                q.rebuild([*live], lambda e: (-e.score, e.seq))
            for _ in range(400):
                op = rng.random()
                if op < 0.4:
                    e = q.pop(lambda h: h != "h0" or rng.random() < 0.5)
                    out.append(e and e.url)
                elif op < 0.6:
                    e = Entry(f"h{rng.randrange(45)}/n{len(entries)}", "", len(entries))
                    e.host = e.url.split("/")[0]
                    e.score = rng.random()
                    entries.append(e)
                    q.push(e, (-e.score, e.seq))
                elif op < 0.9:
                    e = rng.choice(entries)
                    if e.queued:
                        e.score = e.score if op < 0.65 else rng.random()
                        q.push(e, (-e.score, e.seq))
                else:
                    e = rng.choice(entries)
                    q.discard(e)
            if rnd == 1:
                q.compact()
            if rnd == 2:
                out.append([e.url for e in q.spill_worst(100)])
            out.append(sorted(e.url for e in q.entries()))
        while (e := q.pop()) is not None:
            out.append(e.url)
        return out

    assert run(True) == run(False)


def test_round_robin_reads_one_url_per_queue_in_turn():
    q = ServerQueues(round_robin=500)
    for i in range(3):
        for host in ("a", "b", "c"):
            q.push(Entry(f"{host}/{i}", host, i), (i,))
    order = [q.pop().host for _ in range(9)]
    # each server is hit once per round of the queues
    assert all(sorted(order[k:k + 3]) == ["a", "b", "c"] for k in (0, 3, 6))


def test_linkgraph_distance_and_propagation():
    g = LinkGraph(distance_limit=3)
    g.add_edge("a", "b")
    g.add_edge("b", "c")
    g.add_edge("c", "d")
    assert g.distance("b") == INFINITY
    assert sorted(g.set_hot("a")) == ["a", "b", "c"]  # d is 3 away: not within the limit
    assert (g.distance("a"), g.distance("b"), g.distance("c"), g.distance("d")) == (
        0, 1, 2, INFINITY)
    assert g.add_edge("a", "c") == ["c", "d"]  # a shortcut: c drops to 1, d to 2
    assert g.distance("d") == 2
    assert g.add_edge("c", "d") == []  # a duplicate edge changes nothing
    assert g.backlinks("c") == 2
    assert LinkGraph.restore(g.snapshot()).distance("c") == 1


def test_work_conserving_best_n_first_opens_the_next_batch_for_idle_servers():
    def frontier(conserving: bool) -> QueueFrontier:
        f = make_frontier("best-n-first", n=3, seed=1, work_conserving=conserving)
        for i in range(3):  # the top three links are on a.test ...
            f.add(Link(f"a.test/{i}", host="a.test", parent="s", parent_score=0.9))
        for i in range(3):  # ... three lower ones on b.test
            f.add(Link(f"b.test/{i}", host="b.test", parent="s", parent_score=0.2))
        return f

    def not_a(host: str) -> bool:
        return host != "a.test"

    strict = frontier(False)
    first = strict.pop()
    assert first.host == "a.test"
    assert strict.pop(not_a) is None  # the barrier: a.test's two batch URLs block b.test
    conserving = frontier(True)
    assert conserving.pop().url == first.url  # the same first batch, the same seeded order
    other = conserving.pop(not_a)
    assert other is not None and other.host == "b.test"  # the next batch, for the idle server
    assert conserving.stats["batches"] == 2
    # the first batch's URLs still come first once their server is free
    assert conserving.pop().host == "a.test"
    assert conserving.pop().host == "a.test"
    # nothing at all ready: no batch is opened for nobody
    assert conserving.pop(lambda h: False) is None and conserving.stats["batches"] == 2


# -- one page over two schemes ----------------------------------------------------------------
def test_scheme_twin_is_the_url_over_the_other_scheme():
    from focuscrawl.core.urls import scheme_twin

    assert scheme_twin("https://h.test/a/b?q=1") == "http://h.test/a/b?q=1"
    assert scheme_twin("http://h.test/") == "https://h.test/"
    assert scheme_twin("http://h.test") == "https://h.test"
    # a port, IPv6 brackets or user info: not known to be the same server
    for url in ("http://h.test:8080/", "http://[::1]/", "http://u@h.test/", "ftp://h.test/"):
        assert scheme_twin(url) is None


def _web_link(url: str, parent: str | None = None, score: float = 0.5) -> Link:
    from focuscrawl.core.urls import host

    return Link(url, host=host(url), parent=parent, parent_score=score, anchor="page")


@pytest.mark.parametrize("name", ["breadth-first", "best-first", "cho", "learned"])
def test_a_page_over_the_other_scheme_is_a_duplicate(name):
    f = make_frontier(name, keywords=["page"], same_across_schemes=True)
    f.add(_web_link("https://h.test/"))
    root = f.pop()
    assert root is not None and root.url == "https://h.test/"
    f.crawled(root.url, 0.5, False)
    # queued over https: the http link is the same URL found again
    assert f.add(_web_link("https://h.test/q", parent=root.url)) is True
    f.add(_web_link("http://h.test/q", parent=root.url))
    # fetched over https: so is a link to it over http
    f.add(_web_link("http://h.test/", parent=root.url))
    f.flush()
    assert len(f) == 1 and f.stats["scheme_twins"] == 2
    urls = []
    while (entry := f.pop()) is not None:
        urls.append(entry.url)
    assert urls == ["https://h.test/q"]


def test_the_target_of_a_redirect_to_the_other_scheme_is_fetched():
    f = make_frontier("best-first", same_across_schemes=True)
    f.add(_web_link("http://h.test/p"))
    entry = f.pop()
    assert entry is not None
    f.failed(entry.url, learn=False)  # 301 to https: no page at http://h.test/p
    assert f.add(_web_link("https://h.test/p")) is True
    assert [f.pop().url] == ["https://h.test/p"]  # type: ignore[union-attr]
    assert f.stats["scheme_twins"] == 0


def test_two_schemes_are_two_urls_when_the_setting_is_off():
    f = make_frontier("best-first", same_across_schemes=False)
    f.add(_web_link("https://h.test/q"))
    assert f.add(_web_link("http://h.test/q")) is True
    assert len(f) == 2 and f.stats["scheme_twins"] == 0


def test_a_page_queued_on_disk_over_the_other_scheme_is_a_duplicate():
    f = make_frontier("best-first", frontier_memory=16, same_across_schemes=True)
    for i in range(40):
        f.add(Link(f"http://a.test/{i}", host="a.test", parent_score=i / 100))
    assert "http://a.test/0" not in f.entries and "http://a.test/0" in f  # spilled
    assert f.add(Link("https://a.test/0", host="a.test", parent_score=0.9)) is False
    assert len(f) == 40 and f.stats["scheme_twins"] == 1
    assert sorted(f.pop().url for _ in range(40)) == sorted(f"http://a.test/{i}" for i in range(40))
    assert f.pop() is None
    f.close()


def test_each_order_declares_its_capabilities():
    """Callers ask the declared capabilities; they say what the order's interface has."""
    from focuscrawl.core.orders import STRATEGIES, capabilities

    assert capabilities("learned") == Capabilities(learns=True, explores=True)
    assert capabilities("cho-distance").uses_graph and capabilities("distiller").uses_graph
    assert capabilities("best-n-first").batches and not capabilities("best-first").batches
    assert capabilities("no-such-order") == capabilities(None) == Capabilities()
    for name in STRATEGIES:
        f = make_frontier(name, keywords=["x"])
        assert f.capabilities == capabilities(name)
        assert f.learns == f.capabilities.learns
        assert (f.graph is not None) == f.capabilities.uses_graph
        assert f.policy.batches == f.capabilities.batches
        assert hasattr(f.valuation, "explore") == f.capabilities.explores


# -- an order of one's own: a valuation, kept by the frontier every order is kept by -----------
class ShallowestFirst(Valuation):
    name = "shallowest-first"

    def key(self, entry):
        return (entry.url.count("/"), entry.seq)


DEEP: Graph = {
    "d/s": (0.0, False, [("d/a/b/c", ""), ("d/a", ""), ("d/x/y", "")]),
    "d/a": (0.0, False, [("d/a/b", ""), ("e/q", "")]),
    "d/x/y": (0.0, False, [("d/z", "")]),
}


def test_a_new_order_is_a_valuation_of_four_lines():
    """The four lines above are a whole order: the frontier keeps the seen-set, the
    per-server queues and their politeness, snapshots and the spill; ties go to the link
    found first."""
    order = virtual_crawl(QueueFrontier(ShallowestFirst()), DEEP, ["d/s"])
    assert order == ["d/s", "d/a", "e/q", "d/x/y", "d/z", "d/a/b", "d/a/b/c"]
    assert virtual_crawl(QueueFrontier(ShallowestFirst()), DEEP, ["d/s"], snapshot_at=3,
                         remake=lambda: QueueFrontier(ShallowestFirst())) == order
    f = QueueFrontier(ShallowestFirst())
    f.add(Link("d/s", host="d"))
    f.add(Link("e/1", host="e"))
    assert f.pop(lambda server: server == "e").url == "e/1"  # a busy server waits


def test_an_order_of_ones_own_is_chosen_by_name(monkeypatch):
    from focuscrawl.core import orders

    monkeypatch.setattr(orders, "STRATEGIES", dict(orders.STRATEGIES))
    monkeypatch.setattr(orders, "VALUATIONS", dict(orders.VALUATIONS))
    monkeypatch.setattr(orders, "_OPTIONS", dict(orders._OPTIONS))
    orders.register("shallowest-first", lambda **kw: QueueFrontier(ShallowestFirst(), **kw),
                    ShallowestFirst)
    f = orders.make_frontier("shallowest-first", max_buffer=5, n=3)  # n: not its option
    assert f.name == "shallowest-first" and f.max_buffer == 5
    assert orders.capabilities("shallowest-first") == Capabilities()
