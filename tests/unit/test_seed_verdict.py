"""Whether the seeds are examples, when the user did not say (focuscrawl.core.learned.seeds).

No Scrapy here: the frontier is driven as Cho's virtual crawler drives one, over hand-made webs.
"""

from __future__ import annotations

import pytest

from focuscrawl.core.frontier import Link
from focuscrawl.core.learned import PageDigest
from focuscrawl.core.learned.seeds import HUB
from tests.support.learned import hidden_web, learned, virtual_crawl

PORTAL = ["http://portal.test/"]


def deciding(**kw):
    """The learned order left to decide (``-a examples=auto``)."""
    return learned(examples=None, **kw)


def glacier_pages(web) -> list[str]:
    return sorted(u for u, (_, text, _) in web.items() if "glacier" in text)


def off_topic_pages(web) -> list[str]:
    return sorted(u for u, (_, text, _) in web.items()
                  if "glacier" not in text and u.endswith(".html") and "index" not in u)


def test_seeds_that_match_the_keywords_are_taken_as_examples():
    """Half the seeds or more match the keywords: once they are fetched, the options left
    unset take the examples' defaults (nearness and hub evidence on, no host bandit)."""
    web = hidden_web(3)
    seeds = glacier_pages(web)[:2] + off_topic_pages(web)[:2]
    f = deciding()
    v = f.valuation
    assert v.examples is None and (v.window, v.hub, v.bandit.share) == (0, 0.0, 0.5)
    virtual_crawl(f, web, seeds, limit=3)
    assert v.examples is None  # a seed has not reported yet
    virtual_crawl(f, web, [], limit=20)
    assert v.examples is True and f.describe()["seeds_are_examples"] == 1
    assert (v.window, v.trainer.window, v.hub, v.profile_score, v.explore, v.bandit.share) == \
        (4, 4, 1.0, 0.3, 1.0, 0.0)
    assert v.scorer.model.v0[HUB] == 1.0 and v.scorer.hub_areas
    # the seeds the keywords did not take into the profile joined it
    assert v.scorer.profile._fed >= 4


def test_seeds_that_do_not_match_leave_the_order_exactly_as_it_was():
    """Seeds near the topic, not on it: the verdict keeps the options of seeds that are not
    examples, and the crawl's order is the one of a crawl told so, links dropped or not."""
    web = hidden_web(5)
    for drop in (False, True):
        told = virtual_crawl(learned(examples=False), web, PORTAL, drop_ignored=drop)
        f = deciding()
        v = f.valuation
        assert virtual_crawl(f, web, PORTAL, drop_ignored=drop) == told
        assert v.examples is False and f.describe()["seeds_are_examples"] == 0
        assert (v.window, v.hub, v.bandit.share, v.scorer.hub_areas) == (0, 0.0, 0.5, False)
        # with nearness off again the order counts links to queued URLs unbuilt
        assert f.counts_inlinks and not f.only_counts("http://nowhere.test/", PORTAL[0], 0.0)


def test_what_the_user_says_wins():
    """Told (the default: not examples), the order does not decide; an option set stays."""
    web = hidden_web(3)
    seeds = glacier_pages(web)[:3]
    f = learned(examples=False)
    v = f.valuation
    virtual_crawl(f, web, seeds, limit=30)
    assert v.examples is False and (v.window, v.hub) == (0, 0.0)
    assert f.describe()["seeds_are_examples"] == 0
    given = deciding(sibling_window=2)  # an option set stays as set
    virtual_crawl(given, web, seeds, limit=30)
    v = given.valuation
    assert v.examples is True and (v.window, v.hub) == (2, 1.0)


def test_a_seed_that_never_reports_does_not_hold_the_verdict_back():
    """A seed refused or redirected never reports a page: the verdict comes after
    ``learn_every`` pages anyway, from the seeds that did."""
    f = deciding()
    v = f.valuation
    f.add(Link("http://a.test/gone", host="a.test"))
    f.add(Link("http://b.test/1", host="b.test"))
    first = f.pop()
    assert first is not None
    f.failed(first.url, learn=False)  # as a redirect: no page, no label
    page = PageDigest.from_tokens(["glacier"] * 5)
    url = f.pop().url
    f.crawled(url, 0.5, True, page)
    assert v.examples is None
    for k in range(4):  # learn_every is 5
        f.add(Link(f"http://b.test/p{k}", host="b.test", parent=url, depth=1))
        f.crawled(f.pop().url, 0.0, False, PageDigest.from_tokens(["nothing"]))
    assert v.examples is True


@pytest.mark.parametrize("at", [2, 40])
def test_a_restored_crawl_keeps_the_verdict_and_its_order(at):
    """A snapshot before the verdict decides it again the same way; one after keeps it: the
    order is the one of a crawl never stopped."""
    web = hidden_web(3)
    seeds = glacier_pages(web)[:2] + PORTAL
    plain = virtual_crawl(deciding(), web, seeds, limit=120)
    resumed = virtual_crawl(deciding(), web, seeds, limit=120, snapshot_at=at, remake=deciding)
    assert resumed == plain


def test_fewer_than_half_matching_is_not_enough():
    """A seed on the topic among pages near it: the crawl still has to find where the topic
    is, and keeps the host bandit."""
    web = hidden_web(3)
    f = deciding()
    v = f.valuation
    virtual_crawl(f, web, glacier_pages(web)[:1] + off_topic_pages(web)[:2], limit=20)
    assert v.examples is False and v.bandit.share == 0.5
