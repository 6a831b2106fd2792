"""An unknown spider argument is refused like a bad value, naming the closest known one; a user's
subclass keeps its own arguments, and Scrapy's and Scrapyd's pass."""

from __future__ import annotations

from typing import Any

import pytest

from focuscrawl.seam.arguments import SCRAPY_ARGUMENTS, declared_arguments, unknown_argument
from spiders.topic import TopicSpider


def known(cls: type = TopicSpider) -> set[str]:
    return declared_arguments(cls, TopicSpider)


@pytest.mark.parametrize("given, message", [
    ("max_page", "unknown argument 'max_page'; did you mean max_pages?"),
    ("keyword", "unknown argument 'keyword'; did you mean keywords?"),
    ("stratgy", "unknown argument 'stratgy'; did you mean strategy?"),
    ("start_urls", "unknown argument 'start_urls'; did you mean seeds?"),
])
def test_a_typo_names_the_closest_argument(given: str, message: str) -> None:
    assert unknown_argument(["keywords", given], known()) == message


def test_a_name_like_none_lists_the_arguments() -> None:
    line = unknown_argument(["colour"], known())
    assert line is not None and line.startswith("unknown argument 'colour'; the arguments are: ")
    assert "max_pages" in line and "\n" not in line


def test_the_topic_spiders_scrapys_and_scrapyds_arguments_pass() -> None:
    names = [*known(), *SCRAPY_ARGUMENTS, "_job", "name"]
    assert unknown_argument(names, known()) is None
    assert {"keywords", "seeds", "max_pages", "strategy", "render", "examples"} <= known()


class Theirs(TopicSpider):
    """A user's spider: one argument in its signature, one as a class attribute."""

    language = "en"

    def __init__(self, depth_limit: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.depth_limit = depth_limit

    def helper(self) -> None:  # a method is not an argument
        pass


def test_a_subclass_keeps_its_own_arguments() -> None:
    spider = Theirs(keywords="x", seeds="http://a.test/", depth_limit="3", language="de")
    assert spider.unknown_argument is None
    assert (spider.depth_limit, spider.language) == ("3", "de")
    assert "helper" not in known(Theirs)
    typo = Theirs(keywords="x", depth_limt="3")
    assert typo.unknown_argument == "unknown argument 'depth_limt'; did you mean depth_limit?"


def test_the_topic_spider_itself_records_the_first_unknown_argument() -> None:
    assert TopicSpider(keywords="x", max_page="5").unknown_argument == (
        "unknown argument 'max_page'; did you mean max_pages?")
    assert TopicSpider(keywords="x", _job="abc123").unknown_argument is None
