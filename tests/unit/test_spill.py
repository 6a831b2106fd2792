"""Issue 13, bounded memory: FOCUS_FRONTIER_MEMORY spills the worst of the frontier to disk.

The worst spill and the best batch comes back, a learned link with its features; with JOBDIR
the batches live in the state database and a snapshot deletes the batches that came back; old
JOBDIRs resume.  Every strategy's long synthetic crawl, the kill-and-replay tests of a scheduler
and of ``scrapy crawl`` are in tests/integration/test_spill_crawls.py.
"""

from __future__ import annotations

import random
import sqlite3

import pytest

from focuscrawl.core.frontier import Link
from focuscrawl.core.frontier.spill import TempSpill
from focuscrawl.core.frontier.stores import SQLiteStore
from focuscrawl.core.orders import make_frontier
from focuscrawl.seam import options
from tests.support.crashsafe import drive, scheduler_for


def test_the_worst_urls_spill_and_the_best_batch_comes_back():
    frontier = make_frontier("best-first", frontier_memory=16)
    for i in range(40):
        frontier.add(Link(f"http://a.test/{i}", host="a.test", parent_score=i / 100))
    # spilled at 17 queued down to 12, then at 17 again ...: the best stay in memory
    assert len(frontier) == 40
    in_memory = sorted(float(e.url.rsplit("/", 1)[1]) for e in frontier.entries.values())
    assert in_memory == list(range(40 - len(in_memory), 40))
    assert len(frontier.entries) <= 16
    assert "http://a.test/0" in frontier and "http://a.test/39" in frontier
    assert not frontier.add(Link("http://a.test/0", host="a.test", parent_score=0.9))
    assert frontier.stats["duplicates"] == 1  # on disk: a duplicate, its priority frozen
    popped = [frontier.pop().url for _ in range(40)]
    assert popped == [f"http://a.test/{i}" for i in range(39, -1, -1)]  # batches in order
    assert frontier.pop() is None
    stats = frontier.memory_stats()
    assert stats["memory"] == stats["disk"] == 0 and stats["reloads"] >= 1
    frontier.close()


def test_learned_links_come_back_with_their_features():
    """A spilled learned link keeps its feature row, exactly: reloaded and re-scored by the
    same model, it gets the value it would have had in memory."""
    def filled(memory: int):
        frontier = make_frontier("learned", keywords=["garden"], frontier_memory=memory)
        for i in range(30):
            frontier.add(Link(f"http://a.test/{i}", host="a.test", parent="http://a.test/",
                              parent_score=i / 30, anchor="garden" if i % 3 else "next",
                              context=f"words {i} about the garden"))
        frontier.flush()
        return frontier

    values = {e.url: e.score for e in filled(0).entries.values()}
    frontier = filled(8)
    frontier.balance()  # 30 queued: the worst go to disk
    assert len(frontier.entries) <= 8 and frontier.stats["spilled"] == 30 - len(frontier.entries)
    seen = []
    while (entry := frontier.pop()) is not None:
        seen.append(entry.url)
        assert entry.score == pytest.approx(values[entry.url], abs=1e-12)
    assert sorted(seen) == sorted(values)


def test_temp_spill_keeps_batches_until_released():
    spill = TempSpill()
    spill.put(0, b"zero")
    spill.put(1, b"one")
    assert spill.get(1) == b"one"
    spill.release(1)
    with pytest.raises(KeyError):
        spill.get(1)
    assert spill.get(0) == b"zero"
    spill.close()


def test_a_snapshot_deletes_the_batches_that_came_back(tmp_path):
    store = SQLiteStore(tmp_path / "s.sqlite")
    live = {0, 1, 2}
    store.spill_live = lambda: live
    for b in live:
        store.put_spill(b, bytes([b]))
    live.discard(1)  # came back: still readable until the next snapshot
    assert store.get_spill(1) == b"\x01"
    store.snapshot({"n": 1})
    rows = sqlite3.connect(tmp_path / "s.sqlite").execute(
        "SELECT batch FROM spill ORDER BY batch").fetchall()
    assert rows == [(0,), (2,)]
    store.close()


def test_a_resume_keeps_its_frontier_memory(tmp_path):
    """The limit decides when URLs spill, so the journal replays only under the same one."""
    job = tmp_path / "job"
    sched = scheduler_for(job, "best-first", FOCUS_FRONTIER_MEMORY=12)
    drive(sched, random.Random(2), 200)
    assert sched.frontier.stats["spills"] > 0
    sched.close("shutdown")
    other = scheduler_for(job, "best-first", FOCUS_FRONTIER_MEMORY=20)
    assert other.error is not None and "frontier_memory=12" in other.error
    other.close("shutdown")
    again = scheduler_for(job, "best-first", FOCUS_FRONTIER_MEMORY=12)
    assert again.error is None and again.lifecycle.resumed and len(again.frontier.spilled) > 0
    again.close("shutdown")


@pytest.mark.parametrize("memory", [1, 2, 3])
def test_a_limit_of_a_few_urls_still_drains(memory):
    frontier = make_frontier("best-first", frontier_memory=memory)
    for i in range(20):
        frontier.add(Link(f"http://a.test/{i}", host="a.test", parent_score=i / 100))
    popped = []
    while (entry := frontier.pop()) is not None:
        popped.append(entry.url)
    assert sorted(popped) == sorted(f"http://a.test/{i}" for i in range(20))
    assert len(frontier) == 0


def test_a_jobdir_from_before_the_examples_option_resumes(tmp_path):
    """A JOBDIR saved before ``examples`` existed (no such key, the label threshold 0.0)
    resumes: both are what a crawl without examples asks now."""
    job = tmp_path / "job"
    sched = scheduler_for(job, "best-first")
    assert sched.order_options["examples"] is False
    assert sched.order_options["profile_score"] == 0.0  # stated, not None
    del sched.order_options["examples"]  # as saved by the code before it
    drive(sched, random.Random(3), 80)
    sched.close("shutdown")
    again = scheduler_for(job, "best-first")
    assert again.error is None and again.lifecycle.resumed
    again.close("shutdown")
    other = scheduler_for(job, "best-first", FOCUS_EXAMPLES=True)
    assert other.error is not None and "examples=False" in other.error
    other.close("shutdown")


def test_a_crawl_started_under_the_old_default_resumes_under_it(tmp_path, monkeypatch):
    """FOCUS_FRONTIER_MEMORY's default changed (2,000,000 -> 500,000 URLs): a JOBDIR crawl
    started under the old default resumes under it when the setting is left at today's,
    and another explicit value is still refused (here the defaults are scaled down)."""
    job = tmp_path / "job"
    monkeypatch.setattr(options, "FRONTIER_MEMORY_BEFORE", 12)
    sched = scheduler_for(job, "best-first", FOCUS_FRONTIER_MEMORY=12)  # the default then
    drive(sched, random.Random(2), 200)
    assert sched.frontier.stats["spills"] > 0
    sched.close("shutdown")
    monkeypatch.setattr(options, "FRONTIER_MEMORY", 20)
    again = scheduler_for(job, "best-first", FOCUS_FRONTIER_MEMORY=20)  # today's default
    assert again.error is None and again.lifecycle.resumed
    assert again.frontier.spilled.limit == 12 and len(again.frontier.spilled) > 0
    assert again.order_options["frontier_memory"] == 12
    drive(again, random.Random(3), 50)  # and goes on spilling at its own limit
    again.close("shutdown")
    other = scheduler_for(job, "best-first", FOCUS_FRONTIER_MEMORY=30)
    assert other.error is not None and "frontier_memory=12" in other.error
    other.close("shutdown")


def test_a_learned_crawl_started_under_the_old_explore_default_resumes_under_it(tmp_path):
    """FOCUS_EXPLORE's default without examples changed (1.0 -> 2.0): a JOBDIR crawl started
    under the old one resumes under it when the setting is left unset, and goes on under it;
    another explicit value is still refused.  A new crawl takes today's default, and 1.0 with
    examples.  Resumed with the order left to decide (``FOCUS_EXAMPLES="auto"``), a crawl that
    stated ``examples`` False keeps it: it resumes as it began."""
    job = tmp_path / "job"
    topic = {"FOCUS_KEYWORDS": "garden", "FOCUS_LEARN_EVERY": 7}
    sched = scheduler_for(job, "learned", FOCUS_EXPLORE=1.0, **topic)  # the default then
    assert sched.frontier.valuation.explore == 1.0
    drive(sched, random.Random(2), 80)
    sched.close("shutdown")
    again = scheduler_for(job, "learned", **topic)  # today's default
    assert again.error is None and again.lifecycle.resumed
    assert again.order_options["explore"] == 1.0 and again.frontier.valuation.explore == 1.0
    drive(again, random.Random(3), 40)
    again.close("shutdown")
    deciding = scheduler_for(job, "learned", FOCUS_EXAMPLES="auto", **topic)
    assert deciding.error is None and deciding.lifecycle.resumed
    v = deciding.frontier.valuation
    assert deciding.order_options["examples"] is False and v.examples is False
    assert deciding.order_options["explore"] == 1.0 and v.explore == 1.0
    deciding.close("shutdown")
    other = scheduler_for(job, "learned", FOCUS_EXPLORE=3.0, **topic)
    assert other.error is not None and "explore=1.0" in other.error
    other.close("shutdown")
    for examples, explore in ((False, 2.0), (True, 1.0)):
        new = scheduler_for(tmp_path / f"new-{examples}", "learned", FOCUS_EXAMPLES=examples,
                            **topic)
        assert new.order_options["explore"] == explore == new.frontier.valuation.explore
        new.close("shutdown")
    new = scheduler_for(tmp_path / "new-deciding", "learned", FOCUS_EXAMPLES="auto", **topic)
    assert new.order_options["explore"] is None and new.frontier.valuation.explore == 2.0
    new.close("shutdown")


def test_a_batch_spilled_as_rows_still_comes_back():
    """Batches are columns now; a JOBDIR spilled before (a list of packed rows) reloads."""
    import pickle

    frontier = make_frontier("best-first", frontier_memory=16)
    rows = [(f"http://a.test/{i}", "a.test", i + 1, 0.5, False, 1, None, "", None, None)
            for i in range(3)]
    spilled = frontier.spilled
    spilled.store = TempSpill()
    spilled.store.put(0, pickle.dumps(rows))
    spilled.index.append(((-0.5, 1), 0, 3))
    spilled.next = 1
    for row in rows:
        spilled.urls.add(row[0])
    assert [frontier.pop().url for _ in range(3)] == [row[0] for row in rows]
    assert frontier.pop() is None and len(frontier) == 0
    frontier.close()


@pytest.mark.parametrize("keys", ["numbers", "ties", "strings", "widths", "nan"])
def test_spill_worst_is_worst_then_drop(keys):
    """The one-sort spill (numpy) takes the same entries, and leaves the same order, as
    worst() then drop(); keys numpy could order otherwise go the Python way."""
    from focuscrawl.core.frontier.queues import Entry, ServerQueues, _key_order

    def filled():
        rng = random.Random(2)
        q = ServerQueues()
        for i in range(600):
            e = Entry(f"h{i % 7}/{i}", f"h{i % 7}", i)
            score = round(rng.random(), 2)
            key = {"numbers": (-score, i), "ties": (-score,),
                   "strings": (f"{score:.2f}", i), "nan": (float("nan") if i == 7 else score, i),
                   "widths": (-score, i) if i % 2 else (-score, 0, i)}[keys]
            q.push(e, key)
        for i in range(0, 600, 5):  # re-keyed: stale items left behind
            e = next(x for x in q.entries() if x.seq == i)
            q.push(e, (-2.0, i) if keys != "strings" else ("0", i))
        return q

    a, b = filled(), filled()
    live = [item for heap in b._queues.values() for item in heap.items
            if item[-1].queued and item[-1].item is item]
    assert (_key_order(live) is None) == (keys != "numbers")
    expected = a.worst(200)
    a.drop(expected)
    assert [e.url for e in b.spill_worst(200)] == [e.url for e in expected]
    assert len(a) == len(b) == 400
    assert [a.pop().url for _ in range(400)] == [b.pop().url for _ in range(400)]
