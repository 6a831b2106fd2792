"""Evaluation metrics on a six-page repository, every expected value worked out by hand.

The repository (title | body; tokens after the judge's tokenizer):

    P0 /a  "Zones"   | "zone clock"           -> zone x2, clock x1
    P1 /b  "Clocks"  | "clock"                -> clock x2
    P2 /c  "Cooking" | "bread bread bread"    -> cooking x1, bread x3
    P3 /d  "Misc"    | "zone" x10             -> misc x1, zone x10
    P4 /e  "Extra"   | "zone" x9, "bread"     -> extra x1, zone x9, bread x1
    P5 /f  "Empty"   | "bread"                -> empty x1, bread x1

Links: P0->P3, P1->P3, P2->P3, P3->P0, P4->P3, P5->P3, P5->P4 (plus a self-link and a link out
of the repository on P0, both ignored).  Redirect: /alias -> /b.
Topic keywords "zone clock", description "zone clock".

Document frequencies (N = 6): zone 3 (P0 P3 P4), clock 2 (P0 P1), bread 3, the title-only words
1 each.  idf: zone ln2 = 0.693147, clock ln3 = 1.098612, bread ln2, others ln6 = 1.791759.

Query "zone clock" (ltc): (ln2, ln3) / sqrt(ln2^2 + ln3^2) = (0.693147, 1.098612) / 1.299000
  = (zone 0.533600, clock 0.845737).
P0: zone (1 + ln2) ln2 = 1.173600, clock ln3 = 1.098612, |v| = sqrt(1.377337 + 1.206949) = 1.607572
    score = (1.173600 * 0.533600 + 1.098612 * 0.845737) / 1.607572 = 0.967528
P1: only clock -> unit vector on clock -> score = 0.845737
P2, P5: no query term -> 0
P3: misc ln6 = 1.791759, zone (1 + ln10) ln2 = 2.289178, |v| = 2.907015
    score = 2.289178 * 0.533600 / 2.907015 = 0.420193
P4: extra 1.791759, zone (1 + ln9) ln2 = 2.216147, bread ln2 = 0.693147, |v| = 2.932944
    score = 2.216147 * 0.533600 / 2.932944 = 0.403191
Lexical ranking: P0 1, P1 2, P3 3, P4 4, then P2 5, P5 6 (score ties broken by page order).

PageRank (d = 0.85, N = 6): P1, P2, P5 have no in-links -> 0.15/6 = 0.025 each;
  P4 = 0.025 + 0.85 * P5/2 = 0.025 + 0.85 * 0.0125 = 0.035625;
  P3 = 0.025 + 0.85 (P0 + P1 + P2 + P4 + P5/2) = 0.10840625 + 0.85 P0;  P0 = 0.025 + 0.85 P3
  => 0.2775 P3 = 0.12965625 -> P3 = 0.467230, P0 = 0.422145 (sum of all six = 1).
Keywords present: P0 2 (zone, clock); P1 1; P3 1; P4 1; P2 0; P5 0.
Linkage ranking: P0 1; among one keyword P3 (0.467) 2, P4 (0.0356) 3, P1 (0.025) 4;
  then P2 5, P5 6 (equal PageRank, page order).

Hot (keyword in the title, or one keyword >= 10 times in the body): P0 (title "Zones"),
  P1 (title "Clocks"), P3 (zone x10); not P4 (zone x9).  3 hot pages.
Relevant at threshold 0.4: P0, P1, P3, P4.

The crawl (7 fetches):  /c  /a#top  unknown  /d  /a (again)  /e  /alias (-> /b)
  resolved:              P2  P0      -        P3  - (repeat)  P4  P1
"""

from __future__ import annotations

import gzip
import json
import math

import numpy as np
import pytest

from focuscrawl.evaluation import (
    Evaluation,
    Repository,
    cumulative_fraction,
    fetched_urls,
    keyword_phrases,
    ltc_scores,
    pagerank,
    read_crawl,
    tokenize,
)

H = "http://t.test"
PAGES = [
    {"url": f"{H}/a", "title": "Zones", "text": "zone clock",
     "outlinks": [f"{H}/d", f"{H}/a", "http://elsewhere.test/"]},
    {"url": f"{H}/b", "title": "Clocks", "text": "clock", "outlinks": [f"{H}/d"]},
    {"url": f"{H}/c", "title": "Cooking", "text": "bread bread bread", "outlinks": [f"{H}/d"]},
    {"url": f"{H}/d", "title": "Misc", "text": " ".join(["zone"] * 10), "outlinks": [f"{H}/a"]},
    {"url": f"{H}/e", "title": "Extra", "text": " ".join(["zone"] * 9) + " bread",
     "outlinks": [f"{H}/d"]},
    {"url": f"{H}/f", "title": "Empty", "text": "bread", "outlinks": [f"{H}/d", f"{H}/e"]},
]
CRAWL = [f"{H}/c", f"{H}/a#top", "http://unknown.test/x", f"{H}/d", f"{H}/a", f"{H}/e",
         f"{H}/alias"]


@pytest.fixture
def repo() -> Repository:
    return Repository.from_dicts(PAGES, redirects={f"{H}/alias": f"{H}/b"})


@pytest.fixture
def ev(repo: Repository) -> Evaluation:
    return Evaluation(repo, "zone clock", "zone clock", threshold=0.4)


def close(actual, expected, tol=1e-5) -> None:
    np.testing.assert_allclose(np.asarray(actual, dtype=float), expected, rtol=0, atol=tol)


# -- tokenizer ------------------------------------------------------------------------------------
def test_tokenizer_matches_docweb_rules():
    # "the"/"and" stop words; e/g single letters (not [a-z][a-z0-9]+); read_csv splits at "_";
    # plural stripped only for words longer than 4 letters ending in s but not ss.
    assert tokenize("The Transactions, read_csv and class e.g. X11 uses bus") == [
        "transaction", "read", "csv", "class", "x11", "bus"]
    assert keyword_phrases("Time zones datetime") == [("time",), ("zone",), ("datetime",)]
    assert keyword_phrases(["time zone", "datetime", "the"]) == [("time", "zone"), ("datetime",)]


# -- repository -----------------------------------------------------------------------------------
def test_repository_resolves_fragments_redirects_and_mapper(repo: Repository):
    assert repo.resolve(f"{H}/a#frag") == 0
    assert repo.resolve(f"{H}/alias") == 1
    assert repo.resolve("http://unknown.test/x") is None
    assert f"{H}/alias" in repo and repo[f"{H}/alias"].title == "Clocks"
    mapped = Repository.from_dicts(PAGES, canonical=lambda u: u.replace("https://", "http://"))
    assert mapped.resolve("https://t.test/e") == 4


def test_repository_edges_drop_self_external_and_duplicate_links(repo: Repository):
    src, dst = repo.edges
    edges = sorted(zip(src.tolist(), dst.tolist(), strict=True))
    assert edges == [(0, 3), (1, 3), (2, 3), (3, 0), (4, 3), (5, 3), (5, 4)]


def test_repository_from_jsonl_gz_keeps_first_duplicate(tmp_path):
    path = tmp_path / "corpus.jsonl.gz"
    with gzip.open(path, "wt", encoding="utf-8") as f:
        for p in [*PAGES, {**PAGES[0], "title": "second copy"}]:
            f.write(json.dumps({**p, "host": "t.test"}) + "\n")
    r = Repository.from_jsonl(path)
    assert len(r) == 6 and r.duplicates == 1
    assert r[f"{H}/a"].title == "Zones"
    assert r[f"{H}/f"].outlinks == (f"{H}/d", f"{H}/e")


def test_read_crawl_sorts_by_order(tmp_path):
    path = tmp_path / "crawl.jsonl"
    rows = [{"url": f"{H}/b", "order": 2, "score": 0.1, "hot": False, "title": "b"},
            {"url": f"{H}/a", "order": 1, "score": 0.9, "hot": True, "title": "a"}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows) + "\n")
    assert fetched_urls(read_crawl(path)) == [f"{H}/a", f"{H}/b"]


# -- rankings -------------------------------------------------------------------------------------
def test_ltc_scores_by_hand(repo: Repository):
    scores = ltc_scores(repo.terms(), "zone clock")
    close(scores, [0.967528, 0.845737, 0.0, 0.420193, 0.403191, 0.0])


def test_pagerank_three_nodes_with_dangling_page():
    # A->B, B->A, B->C; C has no outlinks and spreads its rank over all three pages.
    # PR(A) = 0.05 + 0.85 (B/2 + C/3) = PR(C) by symmetry of the equations; call it a, B = 1 - 2a.
    # a = 0.05 + 0.425 (1 - 2a) + 0.85 a / 3  =>  (1 + 0.85 - 0.85/3) a = 0.475
    # => a = 0.475 / 1.566667 = 0.303191, B = 0.393617.
    pr = pagerank(3, np.array([0, 1, 1]), np.array([1, 0, 2]))
    close(pr, [0.303191, 0.393617, 0.303191])


def test_pagerank_of_the_repository(ev: Evaluation):
    close(ev.pagerank, [0.422145, 0.025, 0.025, 0.467230, 0.035625, 0.025])


def test_rankings_by_hand(ev: Evaluation):
    assert ev.lexical.order.tolist() == [0, 1, 3, 4, 2, 5]
    assert ev.lexical.rank.tolist() == [1, 2, 5, 3, 4, 6]
    assert ev.keyword_counts.tolist() == [2, 1, 0, 1, 1, 0]
    assert ev.linkage.order.tolist() == [0, 3, 4, 1, 2, 5]
    assert ev.linkage.rank.tolist() == [1, 4, 5, 2, 3, 6]
    assert ev.hot.tolist() == [True, True, False, True, False, False]
    assert ev.relevant.tolist() == [True, True, False, True, True, False]


def test_hot_and_presence_count_phrases():
    # Keyword "time zone" is a phrase: "zone time" is not an occurrence; page 3 has it 10 times.
    pages = [{"url": f"{H}/1", "title": "x", "text": "zone time"},
             {"url": f"{H}/2", "title": "Time zones", "text": "nothing"},
             {"url": f"{H}/3", "title": "y", "text": "time zone " * 10}]
    ev = Evaluation(Repository.from_dicts(pages), ["time zone"], "time zone")
    assert ev.hot.tolist() == [False, True, True]
    assert ev.keyword_counts.tolist() == [0, 1, 1]


# -- metrics --------------------------------------------------------------------------------------
def test_cumulative_fraction():
    close(cumulative_fraction([True, False, True, True]), [1, 0.5, 2 / 3, 0.75])
    assert cumulative_fraction([]).size == 0


def test_harvest_rate_by_judge_score(ev: Evaluation):
    # relevant flags per fetch: P2 0, P0 1, unknown 0, P3 1, repeat 0, P4 1, P1 1
    # cumulative 0 1 1 2 2 3 4 over k = 1..7
    close(ev.harvest_rate(CRAWL), [0, 1 / 2, 1 / 3, 2 / 4, 2 / 5, 3 / 6, 4 / 7])


def test_harvest_rate_by_cho_hotness(ev: Evaluation):
    # hot flags: P2 0, P0 1, unknown 0, P3 1, repeat 0, P4 0, P1 1 -> cumulative 0 1 1 2 2 2 3
    close(ev.harvest_rate(CRAWL, by="hot"), [0, 1 / 2, 1 / 3, 2 / 4, 2 / 5, 2 / 6, 3 / 7])


def test_static_coverage_lexical_and_linkage(ev: Evaluation):
    first4 = CRAWL[:4]  # distinct pages {P2, P0, P3}
    # lexical order P0 P1 P3 P4 P2 P5 -> got 1 0 1 0 1 0 -> hits 1 1 2 2 3 3 -> % of n
    close(ev.static_coverage(first4, "lexical"), [100, 50, 200 / 3, 50, 60, 50], tol=1e-9)
    # linkage order P0 P3 P4 P1 P2 P5 -> got 1 1 0 0 1 0 -> hits 1 2 2 2 3 3
    close(ev.static_coverage(first4, "linkage"), [100, 100, 200 / 3, 50, 60, 50], tol=1e-9)
    # n stops at max_n (Pant: 500) or the repository size
    assert len(ev.static_coverage(first4, "lexical", max_n=3)) == 3
    # the whole crawl gets every page but P5: lexical 100% up to n = 5, then 5/6
    close(ev.static_coverage(CRAWL, "lexical"), [100, 100, 100, 100, 100, 500 / 6], tol=1e-9)


def test_dynamic_mean_rank(ev: Evaluation):
    # lexical ranks: P2 5, P0 1, P3 3, P4 4, P1 2 (unknown and repeat add nothing)
    # means: 5, 6/2, 6/2, 9/3, 9/3, 13/4, 15/5
    close(ev.dynamic_mean_rank(CRAWL, "lexical"), [5, 3, 3, 3, 3, 3.25, 3], tol=1e-9)
    # linkage ranks: P2 5, P0 1, P3 2, P4 3, P1 4 -> 5, 3, 3, 8/3, 8/3, 11/4, 15/5
    close(ev.dynamic_mean_rank(CRAWL, "linkage"), [5, 3, 3, 8 / 3, 8 / 3, 2.75, 3], tol=1e-9)
    starts_unknown = ev.dynamic_mean_rank(["http://unknown.test/x", f"{H}/a"])
    assert math.isnan(starts_unknown[0]) and starts_unknown[1] == 1


def test_target_recall(ev: Evaluation):
    targets = [f"{H}/b", f"{H}/e", "http://nowhere.test/z"]  # the last is not in the repository
    # /e found at k = 6, /b (as /alias) at k = 7; the outside target never: x/3
    close(ev.target_recall(CRAWL, targets), [0, 0, 0, 0, 0, 1 / 3, 2 / 3], tol=1e-9)
    # an outside target still matches its own canonical URL
    close(ev.target_recall(["http://nowhere.test/z#x"], targets), [1 / 3], tol=1e-9)


def test_cho_hot_coverage(ev: Evaluation):
    # 3 hot pages (P0, P1, P3): found at k = 2, 4, 7
    close(ev.hot_coverage(CRAWL), [0, 100 / 3, 100 / 3, 200 / 3, 200 / 3, 200 / 3, 100], tol=1e-9)


def test_judge_scores_replace_computed_scores(repo: Repository):
    ev = Evaluation(repo, "zone clock", "zone clock", threshold=0.5,
                    judge_scores={f"{H}/f": 0.9, f"{H}/c": 0.2})
    assert ev.relevant.tolist() == [False, False, False, False, False, True]
    assert ev.lexical.order.tolist()[:2] == [5, 2]


def test_summary_is_json_ready(ev: Evaluation):
    s = ev.summary(CRAWL, targets=[f"{H}/b"], at=(4,))
    json.dumps(s)
    assert s["pages"] == 7 and s["unknown"] == 1
    assert s["relevant_in_repository"] == 4 and s["hot_in_repository"] == 3
    assert s["at"]["4"]["harvest_score"] == 0.5
    assert s["at"]["7"]["target_recall"] == 1.0
