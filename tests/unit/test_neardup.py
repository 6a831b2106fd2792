"""The near-duplicate index's core: signatures, bands, the in-memory index."""

from __future__ import annotations

import random
import re

import numpy as np
import pytest

from focuscrawl.core.extract import extract
from focuscrawl.core.neardup import (
    CANDIDATE_RECALL,
    MIN_WORDS,
    Layout,
    MemoryIndex,
    Signer,
    band_keys,
)
from tests.support.neardup_web import build

LAYOUT = Layout.for_threshold(0.9)
SIGNER = Signer(LAYOUT)


def shingles(text: str, k: int = 5) -> set[str]:
    words = re.findall(r"\w+", text.lower())
    return {" ".join(words[i:i + k]) for i in range(len(words) - k + 1)}


def jaccard(a: str, b: str) -> float:
    x, y = shingles(a), shingles(b)
    return len(x & y) / len(x | y)


def words(rng: random.Random, n: int) -> list[str]:
    return [f"w{rng.randrange(5000)}" for _ in range(n)]


def sig(text: str) -> np.ndarray:
    s = SIGNER.signature(text)
    assert s is not None
    return s


@pytest.mark.parametrize("threshold", [0.5, 0.8, 0.9, 0.95, 1.0])
def test_a_pair_at_the_threshold_is_a_candidate_almost_surely(threshold):
    layout = Layout.for_threshold(threshold)
    assert layout.rows * layout.bands <= layout.num_perm
    p = 1 - (1 - threshold ** layout.rows) ** layout.bands
    assert p >= CANDIDATE_RECALL
    assert layout.need == int(np.ceil(threshold * layout.num_perm - 1e-9))


def test_a_threshold_outside_0_1_is_refused():
    for bad in (0, -0.1, 1.5):
        with pytest.raises(ValueError, match="threshold"):
            Layout.for_threshold(bad)


def test_signatures_are_the_same_in_every_process_and_for_every_word_order_of_the_set():
    text = "the quick brown fox jumps over the lazy dog again and again today"
    a, b = sig(text), Signer(Layout.for_threshold(0.9)).signature(text)
    assert b is not None and np.array_equal(a, b)
    assert a.dtype == np.uint32 and len(a) == LAYOUT.num_perm
    # the same text in other case and spacing is the same shingle set
    assert np.array_equal(a, sig("THE quick  brown fox, jumps over the lazy dog again and "
                                 "again today!"))


def test_a_text_too_short_to_compare_has_no_signature():
    assert SIGNER.signature("") is None
    assert SIGNER.signature(" ".join(["word"] * (MIN_WORDS - 1))) is None
    assert SIGNER.signature(" ".join(f"w{i}" for i in range(MIN_WORDS))) is not None


def test_the_estimate_follows_the_jaccard_similarity():
    rng = random.Random(3)
    for keep in (1.0, 0.97, 0.9, 0.8, 0.6, 0.3):
        base = words(rng, 400)
        other = [w if rng.random() < keep else f"x{rng.randrange(10**6)}" for w in base]
        a, b = " ".join(base), " ".join(other)
        estimate = np.mean(sig(a) == sig(b))
        assert abs(estimate - jaccard(a, b)) < 0.12, (keep, estimate, jaccard(a, b))


def test_band_keys_are_equal_exactly_where_bands_are():
    a = sig(" ".join(words(random.Random(1), 300)))
    b = a.copy()
    b[0] += 1  # the first band differs, the others are alike
    ka, kb = band_keys(a, LAYOUT), band_keys(b, LAYOUT)
    assert len(ka) == LAYOUT.bands
    assert ka[0] != kb[0] and ka[1:] == kb[1:]
    assert len(set(ka)) == len(ka)  # a band's key depends on its place


def test_the_index_marks_a_near_copy_with_the_first_page_and_keeps_only_distinct_pages():
    rng = random.Random(7)
    original = words(rng, 300)
    copy = list(original)
    copy[150] = "changed"  # a word: 5 shingles of 296
    other = words(rng, 300)
    index = MemoryIndex(LAYOUT)
    assert index.add("http://a/1", sig(" ".join(original))) is None
    assert index.add("http://a/2", sig(" ".join(other))) is None
    assert index.add("http://b/1", sig(" ".join(copy))) == "http://a/1"
    assert len(index) == 2  # the copy is not indexed
    # a page fetched again (a crash, a lost lease) is no copy of itself, and not added twice
    assert index.add("http://a/1", sig(" ".join(original))) is None
    assert len(index) == 2


def test_the_most_similar_page_is_named():
    rng = random.Random(11)
    base = words(rng, 400)
    far = list(base)
    for i in range(0, 400, 60):
        far[i] = f"y{i}"  # 7 changes: similarity about 0.92
    near = list(base)
    near[200] = "z"
    index = MemoryIndex(Layout.for_threshold(0.8))
    index.add("http://far", sig(" ".join(far)))
    assert index.add("http://near", sig(" ".join(near))) == "http://far"  # similar enough
    index2 = MemoryIndex(Layout.for_threshold(0.8))
    index2.insert("http://far", sig(" ".join(far)))
    # two candidates: the nearer named (built by hand: near would be a copy of far)
    index2._insert("http://near", band_keys(sig(" ".join(near)), index2.layout),
                   (sig(" ".join(near)) & 0xFFFF).astype("<u2"))
    assert index2.add("http://base", sig(" ".join(base))) == "http://near"


def test_the_index_finds_the_copies_of_the_test_web_and_no_other_page():
    """On the test web's main texts (as the spider extracts them), in a random order: every
    page of a group after its first is marked with a page of its group; no other page."""
    web, group = build()
    texts = {f"http://{h}{p}": extract(page.body, f"http://{h}{p}").main_text
             for h, pages in web.items() for p, page in pages.items()}
    order = sorted(texts)
    random.Random(5).shuffle(order)
    index = MemoryIndex(LAYOUT)
    marked = {}
    for url in order:
        s = SIGNER.signature(texts[url])
        found = index.add(url, s) if s is not None else None
        if found is not None:
            marked[url] = found
    first = {}
    for url in order:
        first.setdefault(group[url], url)
    should = {u for u in order if first[group[u]] != u}
    right = {u for u, f in marked.items() if group[f] == group[u]}
    assert len(right) / len(marked) >= 0.95 and len(right) / len(should) >= 0.9, (
        set(marked) - right, should - right)


# --------------------------------------------------------------------------- in a crawl
def test_a_near_copy_teaches_the_learned_order_nothing_new():
    from focuscrawl.core.learned import PageDigest
    from focuscrawl.core.orders import make_frontier
    from focuscrawl.seam.neardup import nothing_new

    order = make_frontier("learned", keywords=["glacier"]).valuation
    digest = PageDigest.from_tokens(["glacier"] * 20 + ["ice"] * 5, hits=(20,))
    label, by_keywords = order.relevance(1.0, digest)
    assert label == 1.0
    copy_label, copy_keywords = order.relevance(1.0, nothing_new(digest))
    assert copy_label == 0.0 and copy_keywords == by_keywords
    # with the user's examples' probability mixed in, still nothing
    told = PageDigest(digest.terms, digest.rest, digest.hits, 0.9, 0.5)
    assert order.relevance(1.0, nothing_new(told))[0] == 0.0


class _Stats:
    def __init__(self) -> None:
        self.values: dict[str, int] = {}

    def inc_value(self, name: str, count: int = 1) -> None:
        self.values[name] = self.values.get(name, 0) + count


class _Crawler:
    def __init__(self) -> None:
        self.stats = _Stats()


def test_only_pages_that_will_be_exported_are_indexed_and_a_store_keeps_them(tmp_path):
    from focuscrawl.core.neardup import IndexUnavailable
    from focuscrawl.seam.neardup import FOUND, UNCHECKED, IndexFile, NearDuplicates

    text = " ".join(words(random.Random(2), 200))
    store = IndexFile(tmp_path / "nd.sqlite")
    crawler = _Crawler()
    near = NearDuplicates(crawler, MemoryIndex(LAYOUT), mode="mark",  # type: ignore[arg-type]
                          min_score=0.2, store=store)
    assert near.check("http://a/low", text, 0.1) is None  # under FOCUS_MIN_SCORE: not exported
    assert near.check("http://a/1", text, 0.5) is None
    assert near.check("http://b/1", text + " more", 0.3) == "http://a/1"
    assert near.check("http://a/short", "too short", 0.5) is None
    assert crawler.stats.values == {FOUND: 1}
    near.close()
    # a resumed crawl's index knows the page exported before
    kept = IndexFile(tmp_path / "nd.sqlite").pages()
    assert IndexFile(tmp_path / "other.sqlite", signing="a").pages() == []
    assert [url for url, _ in kept] == ["http://a/1"]
    resumed = MemoryIndex(LAYOUT)
    for url, s in kept:
        resumed.insert(url, s)
    assert resumed.add("http://c/1", sig(text)) == "http://a/1"
    # signed otherwise (another focuscrawl): the file starts anew, not compared wrongly
    assert IndexFile(tmp_path / "nd.sqlite", signing=LAYOUT.signing()).pages() == []

    class Away:
        layout = LAYOUT

        def add(self, url: str, signature: np.ndarray) -> str | None:
            raise IndexUnavailable("Redis at 127.0.0.1:1 is unreachable")

        def __len__(self) -> int:
            return 0

    crawler = _Crawler()
    away = NearDuplicates(crawler, Away(), mode="mark", min_score=0.0)  # type: ignore[arg-type]
    assert away.check("http://a/1", text, 0.5) is None
    assert crawler.stats.values == {UNCHECKED: 1}


def test_the_reports_count_distinct_relevant_pages_and_the_copies():
    from focuscrawl.evaluation.summary import summarise_rows
    from focuscrawl.seam.watch.dashboard.tracker import Tracker
    from focuscrawl.seam.watch.logstats import focus_line

    rows = [{"url": "http://a/1", "score": 0.5}, {"url": "http://m/1", "score": 0.5,
                                                   "duplicate_of": "http://a/1"},
            {"url": "http://a/2", "score": 0.05}]
    s = summarise_rows(rows, relevant=0.1)
    assert (s.pages, s.relevant, s.near_duplicates) == (3, 1, 1)
    assert [r["url"] for r in s.top] == ["http://a/1", "http://a/2"]  # no copy among the best
    t = Tracker(0.1)
    t.page("a", "http://a/1", 0.5)
    t.page("m", "http://m/1", 0.5, duplicate=True)
    assert (t.relevant, t.near_duplicates, t.servers["m"].relevant) == (1, 1, 0)
    line = focus_line({"pages": 3, "queued": 0}, 1, None, final=True, near_duplicates=1)
    assert line == "3 pages, 1 relevant (harvest 0.33), 1 near-duplicates, 0 hot, 0 queued"


def test_bad_near_duplicate_settings_are_said_in_one_line():
    from scrapy.settings import Settings

    from focuscrawl.seam.neardup import NearDuplicates

    assert NearDuplicates.settings_error(Settings()) is None
    assert "give one of mark, drop, off" in NearDuplicates.settings_error(
        Settings({"FOCUS_NEAR_DUPLICATES": "keep"}))
    assert "FOCUS_NEAR_DUPLICATES_THRESHOLD" in NearDuplicates.settings_error(
        Settings({"FOCUS_NEAR_DUPLICATES_THRESHOLD": 1.5}))


def test_the_signature_is_datasketchs_minhash_of_the_shingle_hashes():
    from datasketch import MinHash

    from focuscrawl.core.neardup import SCHEME, SEED, shingle_hashes

    # the permutations are datasketch's for the same seed and scheme
    assert np.array_equal(SIGNER.permutations,
                          MinHash(num_perm=LAYOUT.num_perm, seed=SEED, scheme=SCHEME).permutations)
    text = " ".join(words(random.Random(8), 700))
    values = shingle_hashes(text)
    assert values is not None and len(values) == len(shingles(text))
    m = MinHash(num_perm=LAYOUT.num_perm, hashfunc=int, permutations=SIGNER.permutations,
                scheme=SCHEME)
    m.update_batch(values.tolist())
    assert np.array_equal(sig(text), m.hashvalues)
