"""No fetch lost to hosts that do not answer: the host bandit weighs a host never tried by the
share of the hosts tried that gave a page, and a fetch that gave no page is no page for the
retrain cadence.  Virtual crawls over hand-made webs, no server."""

from __future__ import annotations

import random

import pytest

from focuscrawl.core.frontier.slack import AdaptiveSlack
from focuscrawl.core.learned.bandit import HostBandit
from tests.support.learned import learned, virtual_crawl


def _web_with_dead_links(seed: int, dead: int = 80, live: int = 3) -> dict:
    """A portal links to ``dead`` hosts that are not in the web (every fetch there fails, as
    a host outside a closed web or a dead link does) and to ``live`` hosts of 60 pages each,
    some of them saying "glacier"; the live hosts' pages link on to more dead hosts."""
    rng = random.Random(seed)
    filler = "the of page this site section information contact about news".split()
    web: dict[str, tuple[str, str, list]] = {}
    portal = [(f"http://d{k}.test/index.html", f"archive {k}") for k in range(dead)]
    for h in range(live):
        base = f"http://live{h}.test/"
        for k in range(60):
            words = [rng.choice(filler) for _ in range(80)] + (["glacier"] if k % 3 == 0 else [])
            links = [(f"{base}p{(k + 1) % 60}.html", f"next {k}"),
                     (f"{base}p{(k + 7) % 60}.html", f"more {k}"),
                     (f"http://d{dead + 60 * h + k}.test/", f"elsewhere {k}")]
            web[f"{base}p{k}.html"] = (f"page {k}", " ".join(words), links)
        portal.append((f"{base}p0.html", f"site {h}"))
    web["http://portal.test/"] = ("Portal", "welcome", portal)
    return web


def _dead_hosts_tried(order: list[str]) -> int:
    return len({u.split("/")[2] for u in order if u.split("/")[2].startswith("d")})


@pytest.mark.parametrize("seed", [1, 2])
def test_the_bandit_tries_fewer_new_hosts_where_new_hosts_do_not_answer(seed, monkeypatch):
    """Half the URLs handed out are the bandit's, and a host never tried has the most
    optimism.  Weighed fully, nearly every bandit turn went to a new host, which failed; weighed
    by the share of tried hosts that answered, the turns go to the hosts that do once that
    share has fallen, and the crawl fetches more pages of the live hosts."""
    web = _web_with_dead_links(seed)
    f = learned()
    order = virtual_crawl(f, web, ["http://portal.test/"], limit=200)
    with monkeypatch.context() as m:
        m.setattr(HostBandit, "answer_rate", lambda self: 1.0)  # as before: fully weighed
        g = learned()
        before = virtual_crawl(g, web, ["http://portal.test/"], limit=200)
    assert f.valuation.bandit.answer_rate() < 0.25  # most hosts tried did not answer
    assert _dead_hosts_tried(order) < 0.75 * _dead_hosts_tried(before)
    live = sum(1 for u in order if u in web)
    assert live > sum(1 for u in before if u in web)


def test_where_hosts_answer_a_new_host_keeps_its_whole_weight():
    """On a web where every host answers the share stays 1: the bandit is as it was."""
    web = _web_with_dead_links(1, dead=0)
    web = {u: (t, x, [(v, a) for v, a in links if v in web]) for u, (t, x, links) in web.items()}
    f = learned()
    virtual_crawl(f, web, ["http://portal.test/"], limit=100)
    assert len(f.valuation.bandit.reached) == 4 and all(f.valuation.bandit.reached.values())
    assert f.valuation.bandit.answer_rate() == 1.0


def test_a_restored_crawl_knows_the_share_of_hosts_that_answered():
    web = _web_with_dead_links(3)
    f = learned()
    virtual_crawl(f, web, ["http://portal.test/"], limit=120)
    g = learned()
    g.restore(f.snapshot())
    assert g.valuation.bandit.answering == f.valuation.bandit.answering > 0
    assert g.valuation.bandit.answer_rate() == f.valuation.bandit.answer_rate() < 1.0


def test_a_failed_fetch_is_no_page_for_the_retrain_cadence():
    """Every ``learn_every`` (5) pages that answered, one retrain; failed fetches are labelled
    (the link was not worth it) and counted apart."""
    web = _web_with_dead_links(4)
    f = learned()
    order = virtual_crawl(f, web, ["http://portal.test/"], limit=200)
    failed = sum(1 for u in order if u not in web)
    assert failed > 20 and f.stats["fetch_failures"] == failed
    assert f.stats["pages"] == len(order)  # each labelled
    assert f.valuation.answered_pages == len(order) - failed
    assert f.stats["retrains"] == f.valuation.answered_pages // 5


def test_a_failed_fetch_is_no_page_for_the_slacks_pace():
    """A crawl bounded by time takes every idle server's page once its pace per page says the
    page budget outlasts the deadline; a fetch that gave no page is no page for that pace (the
    order still labels its link), else a crawl among hosts that do not answer looks fast
    enough to be bounded by pages, and waits for its best servers."""
    web = _web_with_dead_links(5)
    f = learned(explore_hosts=0.0)  # every URL through the slack (the bandit's are not)
    ticks = iter(range(10**6))
    f.adaptive_slack = AdaptiveSlack(0.5, clock=lambda: float(next(ticks)), deadline=1e9,
                                     pages_left=lambda: 10_000)
    order = virtual_crawl(f, web, ["http://portal.test/"], limit=150)
    failed = sum(1 for u in order if u not in web)
    assert failed > 20 and f.valuation.stats["fetch_failures"] == failed
    assert f.adaptive_slack._labels == len(order) - failed
    assert not f.adaptive_slack.pending  # nothing left waiting for a label
