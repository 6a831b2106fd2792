"""A guard's refusals: every one counted by the guard, the first of each reason said at INFO."""

from __future__ import annotations

import logging

from scrapy.utils.test import get_crawler

from focuscrawl.seam.refusals import Refusals, SayOnce


def test_the_first_refusal_of_each_reason_is_said_once(caplog) -> None:
    log = logging.getLogger("focuscrawl.test.refusals")
    say = SayOnce("a guard", log)
    with caplog.at_level(logging.INFO, logger=log.name):
        for url in ("http://a.test/1", "http://a.test/2"):
            say("trap", url, "focus/filtered/trap")
        say("junk", "http://b.test/x", "focus/filtered/junk")
    lines = [r.getMessage() for r in caplog.records if r.name == log.name]
    assert len(lines) == 2
    assert "http://a.test/1" in lines[0] and "trap" in lines[0] and "a guard" in lines[0]
    assert "http://b.test/x" in lines[1] and "focus/filtered/junk" in lines[1]


def test_refusals_count_every_one_and_say_the_first(caplog) -> None:
    crawler = get_crawler()
    crawler.stats.open_spider()
    log = logging.getLogger("focuscrawl.test.refusals")
    refusals = Refusals(crawler.stats, "focus/safety/blocked", "private-address guard", log)
    with caplog.at_level(logging.INFO, logger=log.name):
        for i in range(3):
            refusals.refused("loopback", f"http://127.0.0.{i + 1}/")
    assert crawler.stats.get_value("focus/safety/blocked/loopback") == 3
    assert sum(r.name == log.name for r in caplog.records) == 1
