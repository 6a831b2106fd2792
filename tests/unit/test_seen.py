"""The seen-set of 8-byte URL fingerprints: a set's answers, growth, and snapshots."""

from __future__ import annotations

import pickle
import random

from focuscrawl.core.frontier import FingerprintSet, Link, fingerprint
from focuscrawl.core.orders import make_frontier


def test_fingerprint_is_stable_across_processes() -> None:
    # xxh3_64 of the UTF-8 bytes: a snapshot restored by another process must agree
    assert fingerprint("https://example.org/") == 10244629399500999497
    assert fingerprint("https://example.org/ü") != fingerprint("https://example.org/u")
    assert fingerprint("") != 0


def test_membership_add_discard() -> None:
    s = FingerprintSet()
    assert "https://a.test/" not in s and len(s) == 0
    s.add("https://a.test/")
    s.add("https://a.test/")
    assert "https://a.test/" in s and "https://b.test/" not in s and len(s) == 1
    s.discard("https://b.test/")  # absent: nothing happens
    s.discard("https://a.test/")
    assert "https://a.test/" not in s and len(s) == 0
    assert 42 not in s


def test_agrees_with_a_set_through_growth_and_deletions() -> None:
    rng = random.Random(7)
    urls = [f"https://h{rng.randrange(40)}.test/p/{i}" for i in range(20_000)]
    s, ref = FingerprintSet(), set()
    for step in range(120_000):
        url = urls[rng.randrange(len(urls))]
        r = rng.random()
        if r < 0.6:
            s.add(url)
            ref.add(url)
        elif r < 0.75:
            s.discard(url)  # backward-shift deletion keeps every other URL reachable
            ref.discard(url)
        else:
            assert (url in s) == (url in ref), step
    assert len(s) == len(ref) > 1024  # grew past the first table
    assert [u in s for u in urls] == [u in ref for u in urls]
    assert s.nbytes / len(s) <= 16  # at least half full after growing by 1.5x


def test_snapshot_restore_round_trip() -> None:
    urls = [f"https://h{i % 13}.test/{i}" for i in range(5000)]
    s = FingerprintSet(urls[:3000])
    data = s.to_bytes()
    assert isinstance(data, bytes) and len(data) == 8 * 3000
    t = FingerprintSet.from_bytes(pickle.loads(pickle.dumps(data)))
    assert len(t) == 3000
    assert [u in t for u in urls] == [i < 3000 for i in range(len(urls))]
    t.add(urls[4000])
    assert urls[4000] in t and urls[4000] not in s  # independent copies
    assert len(FingerprintSet.from_bytes(FingerprintSet().to_bytes())) == 0


def test_frontier_snapshot_keeps_the_seen_set_and_reads_the_old_format() -> None:
    f = make_frontier("breadth-first")
    for i in range(10):
        f.add(Link(f"https://a.test/{i}", host="a.test"))
    handed = [f.pop().url for _ in range(4)]
    state = pickle.loads(pickle.dumps(f.snapshot()))
    assert isinstance(state["done"], bytes)
    g = make_frontier("breadth-first")
    g.restore(state)
    assert all(u in g for u in handed) and len(g.done) == 4 and len(g) == 6
    assert not g.add(Link(handed[0], host="a.test"))  # seen: not queued again
    state["done"] = sorted(handed)  # a snapshot written before fingerprints: URLs
    h = make_frontier("breadth-first")
    h.restore(state)
    assert all(u in h.done for u in handed) and len(h.done) == 4


def test_a_fingerprint_map_agrees_with_a_dict_through_growth_and_snapshots() -> None:
    from focuscrawl.core.fingerprints import FingerprintMap

    rng = random.Random(11)
    urls = [f"https://h{rng.randrange(40)}.test/p/{i}" for i in range(30_000)]
    m, ref = FingerprintMap("d"), {}
    for url in urls:
        if rng.random() < 0.7:
            value = rng.random()
            m[url] = ref[url] = value
            if rng.random() < 0.2:  # set again: a new value, not a new key
                m[url] = ref[url] = value + 1.0
    assert len(m) == len(ref) > 1024
    assert [m.get(u) for u in urls] == [ref.get(u) for u in urls]
    assert m.nbytes / len(m) <= 32  # 16 bytes a slot, at least half full
    copy = FingerprintMap.from_state(pickle.loads(pickle.dumps(m.to_state())))
    assert [copy.get(u, -1.0) for u in urls] == [ref.get(u, -1.0) for u in urls]
    parents = FingerprintMap("Q")  # another URL's fingerprint as the value
    parents["https://a.test/x"] = fingerprint("https://a.test/")
    assert parents.get("https://a.test/x") == fingerprint("https://a.test/")
    assert parents.get_fp(fingerprint("https://a.test/")) is None
    # a snapshot from before the maps: a dict keyed by URL
    assert FingerprintMap.from_state({"https://a.test/": 0.25})["https://a.test/"] == 0.25
