"""The ``topic`` spider: score each page against the topic, export it, report its outlinks.

    scrapy crawl topic -a keywords="transaction isolation, MVCC" -a seeds=URL[,URL...] -O out.jsonl

Everything the frontier needs about a page travels with the requests for its outlinks
(``meta["focus"]``: anchor text, parent URL, parent score and hotness, whether the anchor or URL
names a keyword), and the page's own score is announced with the ``page_scored`` signal.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from datetime import datetime, timezone
from itertools import chain
from typing import Any

import scrapy
from scrapy import signals
from scrapy.exceptions import CloseSpider
from scrapy.http import Response

from focuscrawl import config
from focuscrawl.core.content import PageContent
from focuscrawl.core.extract import ExtractedPage, extract
from focuscrawl.core.learned import PageDigest
from focuscrawl.core.orders import capabilities
from focuscrawl.core.relevance import PageScore, Topic, tokenize
from focuscrawl.core.urls import canonical, in_domains
from focuscrawl.seam import signals as focus_signals
from focuscrawl.seam.arguments import (
    ArgumentError,
    CrawlArguments,
    SpiderArguments,
    declared_arguments,
    parse_arguments,
    unknown_argument,
)
from focuscrawl.seam.content import ContentExtraction
from focuscrawl.seam.examples import ExamplePages
from focuscrawl.seam.meta import LINK, ORDER, WHOLE_BODY
from focuscrawl.seam.neardup import NearDuplicates, nothing_new
from focuscrawl.seam.output.items import page_item_class
from focuscrawl.seam.records import is_html, request_key
from focuscrawl.seam.revisit import Kept, Revisits
from focuscrawl.seam.services import FocusServices, KnownUrls
from focuscrawl.seam.signals import START_ERROR_STAT

logger = logging.getLogger(__name__)


class TopicSpider(scrapy.Spider):
    name = "topic"
    #: without -o/-O (or FEEDS) the pages still go to FOCUS_DEFAULT_FEED (the add-on sees this)
    focus_default_feed = True

    def __init__(
        self,
        keywords: str | None = None,
        seeds: str | None = None,
        max_pages: str | None = None,
        strategy: str | None = None,
        allowed_domains: str | None = None,
        n: str | None = None,
        max_buffer: str | None = None,
        seed: str | None = None,
        reorder: str | None = None,
        render: str | None = None,
        examples: str | None = None,
        negatives: str | None = None,
        revisit: str | None = None,
        content: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        # a typo (-a max_page=5) is refused like a bad value; a subclass's own arguments are not
        known = declared_arguments(type(self), TopicSpider)
        self.unknown_argument = unknown_argument(kwargs, known)
        # what focuscrawl's components read of this spider (focuscrawl.seam.arguments)
        self.focus_arguments = SpiderArguments(raw={
            "keywords": keywords, "seeds": seeds, "max_pages": max_pages, "strategy": strategy,
            "allowed_domains": allowed_domains, "n": n, "max_buffer": max_buffer, "seed": seed,
            "reorder": reorder, "render": render, "examples": examples,
            "negatives": negatives, "revisit": revisit, "content": content,
        })
        self.topic: Topic | None = None
        self.pages = 0
        self.relevant = 0
        self.learning = False  # the crawl order learns from page digests (set in _configure)
        self.example_pages: ExamplePages | None = None  # the page classifier (set in _configure)
        # the outlinks the crawl order would ignore, dropped before a Request is built (the
        # crawl's FocusServices part, found at start: extensions are built after the spider)
        self.known_urls: KnownUrls | None = None
        # a continuous crawl's revisits (focuscrawl.seam.revisit), found at start
        self.revisits: Revisits | None = None
        self.near_duplicates: NearDuplicates | None = None  # FocusServices' part, at start
        self.content: ContentExtraction | None = None  # the pages' content (set in _configure)

    @property
    def args(self) -> CrawlArguments | None:
        return self.focus_arguments.parsed

    @property
    def argument_error(self) -> str | None:
        return self.focus_arguments.error

    @property
    def _content_mode(self) -> str:
        return self.content.mode if self.content is not None else "none"

    @classmethod
    def from_crawler(cls, crawler: Any, *args: Any, **kwargs: Any) -> TopicSpider:
        spider = super().from_crawler(crawler, *args, **kwargs)
        spider._configure()
        crawler.signals.connect(spider._save_state, signal=signals.spider_closed)
        return spider

    def _configure(self) -> None:
        """Validate arguments; on error remember one line for start() to report."""
        s = self.settings
        published = self.focus_arguments
        raw = dict(published.raw)
        if raw["keywords"] is None and config.get(s, "FOCUS_KEYWORDS"):
            raw["keywords"] = config.get(s, "FOCUS_KEYWORDS")
        if raw["seeds"] is None and config.get(s, "FOCUS_SEEDS"):
            raw["seeds"] = config.get(s, "FOCUS_SEEDS")
        if raw["examples"] is None and config.get(s, "FOCUS_EXAMPLE_URLS"):
            raw["examples"] = config.get(s, "FOCUS_EXAMPLE_URLS")
        if raw["negatives"] is None and config.get(s, "FOCUS_NEGATIVE_URLS"):
            raw["negatives"] = config.get(s, "FOCUS_NEGATIVE_URLS")
        try:
            if self.unknown_argument:
                raise ArgumentError(self.unknown_argument)
            args = parse_arguments(**raw)
            if not args.seeds:
                raise ArgumentError("no seed URLs: give -a seeds=URL[,URL...] or a file of URLs")
            self.topic = Topic(
                args.keywords,
                hot_body_count=config.get(s, "FOCUS_HOT_BODY_COUNT"),
                use_idf=config.get(s, "FOCUS_IDF"),
            )
            self.content = ContentExtraction.from_settings(s, args.content, crawler=self.crawler)
        except ArgumentError as e:
            published.error = str(e)
            return
        published.parsed = args
        strategy = published.frontier.get("strategy") or config.get(s, "FOCUS_STRATEGY")
        self.learning = capabilities(strategy).learns
        self.allowed_domains = args.allowed_domains or None
        self.relevant_score = config.get(s, "FOCUS_RELEVANT_SCORE")
        told = published.frontier.get("examples", config.get(s, "FOCUS_EXAMPLES"))
        self.example_pages = ExamplePages(
            self.crawler, positives=args.seeds if told else args.examples,
            negatives=args.negatives, seeds=args.seeds, relevant_score=self.relevant_score,
            weight=config.get(s, "FOCUS_RELEVANCE_WEIGHT"),
            seeds_undecided=told is None and self.learning)  # the order decides

    async def start(self) -> AsyncIterator[scrapy.Request]:
        if self.argument_error:
            logger.error("focuscrawl: %s", self.argument_error)
            self.crawler.stats.set_value("focus/argument_error", self.argument_error)
            self.crawler.stats.set_value(START_ERROR_STAT, self.argument_error)
            raise CloseSpider("bad_arguments")
        assert self.args is not None and self.topic is not None
        services = self.crawler.get_extension(FocusServices)
        self.known_urls = services.known_urls if services is not None else None
        self.revisits = services.revisits if services is not None else None
        self.near_duplicates = services.near_duplicates if services is not None else None
        examples = self.example_pages
        assert examples is not None
        if not examples.resume(getattr(self, "state", None)):
            await examples.fetch(self._example_digest)  # before any seed: first, politely
        for url in self.args.seeds:
            if not self._allowed(url):
                logger.warning("seed %s is outside allowed_domains; skipped", url)
                continue
            yield scrapy.Request(
                url,
                meta={LINK: {"anchor": "", "parent": None, "keyword": self.topic.mentions(url)}},
            )

    def _save_state(self) -> None:
        """The classifier into the spider's state (kept in JOBDIR by Scrapy's SpiderState,
        which saves it after this handler: it connects later)."""
        if self.example_pages is not None:
            self.example_pages.save(getattr(self, "state", None))

    def _example_digest(self, response: Response) -> PageDigest | None:
        """An example page's digest, as a crawled page's is made."""
        try:
            html = response.text
        except (AttributeError, UnicodeDecodeError, LookupError):
            return None
        title_tokens, _, main_tokens = self._tokens(extract(html, response.url))
        return self._digest(title_tokens + main_tokens)

    def _digest(self, tokens: list[str]) -> PageDigest:
        """What a learning crawl order needs of the page: its main text's terms and the
        keyword counts there (navigation and sidebars, the same on every page, left out)."""
        assert self.topic is not None
        return PageDigest.from_counts(Counter(tokens), self.topic.hits(tokens))

    @staticmethod
    def _tokens(page: ExtractedPage) -> tuple[list[str], list[str], list[str]]:
        """The words of the page's title, of its text and of its main text, each run of its
        text tokenized once: ``tokenize(page.text)`` and ``tokenize(page.main_text)`` (a
        word never spans two runs)."""
        title = tokenize(page.title)
        runs = [(tokenize(run), in_chrome) for run, in_chrome in page.runs]
        body = list(chain.from_iterable(tokens for tokens, _ in runs))
        if page.main_text == page.text:  # no chrome, or nothing but chrome
            return title, body, body
        return title, body, list(chain.from_iterable(
            tokens for tokens, in_chrome in runs if not in_chrome))

    def _allowed(self, url: str) -> bool:
        # by host name, port aside: what Scrapy's offsite filter lets through after this check
        return not self.allowed_domains or in_domains(url, self.allowed_domains)

    def parse(self, response: Response) -> Iterator[Any]:
        stats = self.crawler.stats
        revisits = self.revisits
        if revisits is not None:  # a revisit's 304, 404 or 410
            answered = revisits.answered(response)
            if answered is not None:
                kept_item = page_item_class(self._content_mode, kept=True)  # the crawl's columns
                yield from (kept_item(**fields) for fields in answered)
                return
        if not is_html(response):  # the scheduler did not count it as a page either
            stats.inc_value("focus/skipped/not_html")
            return
        content_type = (response.headers.get(b"Content-Type") or b"").decode("latin-1")
        assert self.topic is not None
        try:
            html = response.text
        except (UnicodeDecodeError, LookupError):
            stats.inc_value("focus/skipped/undecodable")
            return
        # the links' nearby text is the learned order's evidence only
        page = extract(html, response.url, with_context=self.learning)
        # the text's words for the score and for the digest (the classifier's features and
        # the learned order's evidence), found once
        title_tokens, body_tokens, main_tokens = self._tokens(page)
        scored = self.topic.score_tokens(title_tokens, body_tokens)
        digest: PageDigest | None = self._digest(title_tokens + main_tokens)
        examples = self.example_pages
        assert examples is not None and digest is not None
        relevance = examples.page(response, digest, scored.score)
        digest = examples.label_digest(digest, relevance) if self.learning else None
        url = canonical(response.url)
        kept = extracted = None
        if revisits is not None:  # the main content decides what changed
            extracted = self._main_content(response, html, page)
            main_text = extracted.text if extracted is not None else page.main_text
            kept = revisits.kept(response, url, main_text, scored.score, page.links)
            if kept.gone:  # the pages no kept page links to any more
                gone_item = page_item_class(self._content_mode, kept=True)
                yield from (gone_item(**fields) for fields in kept.gone)
            if kept.fields is None:
                return  # a revisit that found nothing new: no line, no new link
            if not kept.first:
                yield self._item(response, html, page, scored, relevance, content_type, kept,
                                 extracted=extracted)
                yield from self._outlinks(page, url, scored)
                return
        # near-copies are told by the text without navigation, headers, footers and sidebars:
        # FOCUS_CONTENT's main text keeps more of a template's chrome (docs/benchmarks.md)
        near = self.near_duplicates
        duplicate_of = near.check(response.url, page.main_text, scored.score) if near else None
        if duplicate_of is not None and digest is not None:
            digest = nothing_new(digest)  # a copy is no harvest: the order learns so
        self.pages += 1
        if scored.score >= self.relevant_score and duplicate_of is None:
            self.relevant += 1
        stats.set_value("focus/relevant_pages", self.relevant)
        stats.set_value("focus/harvest_rate", round(self.relevant / self.pages, 4))
        self.crawler.signals.send_catch_log(
            focus_signals.page_scored, url=url, score=scored.score, hot=scored.hot,
            digest=digest, title=page.title, duplicate_of=duplicate_of, spider=self,
        )
        yield self._item(response, html, page, scored, relevance, content_type, kept,
                         duplicate_of, extracted)
        yield from self._outlinks(page, url, scored)

    def _main_content(self, response: Response, html: str, page: ExtractedPage,
                      ) -> PageContent | None:
        """A continuous crawl's page content, extracted for every page so that a change is
        always told by the same main text (FOCUS_CONTENT's; None with content off: the text
        without navigation, headers, footers and sidebars then)."""
        content = self.content
        if content is None or content.mode == "none":
            return None
        return content.extract(response, html, response.url, page.main_text)

    def _item(self, response: Response, html: str, page: ExtractedPage, scored: PageScore,
              relevance: float | None, content_type: str, kept: Kept | None,
              duplicate_of: str | None = None, extracted: PageContent | None = None) -> Any:
        """The page's line: its fields, its content (FOCUS_CONTENT), a continuous crawl's
        version fields, why (explain)."""
        focus = response.meta.get(LINK) or {}
        fields: dict[str, Any] = dict(
            url=response.url,
            status=response.status,
            title=page.title,
            score=round(scored.score, 6),
            hot=scored.hot,
            depth=response.meta.get("depth", 0),
            parent=focus.get("parent"),
            anchor=focus.get("anchor", ""),
            fetched_at=datetime.now(timezone.utc).isoformat(timespec="milliseconds"),
            content_type=content_type,
            text_length=len(page.text),
            outlinks=len(page.links),
            order=response.meta.get(ORDER),
            priority=round(float(focus.get("priority", 0.0)), 6),
            truncated="truncated" in response.flags,
            relevance=None if relevance is None else round(relevance, 6),
            duplicate_of=duplicate_of,
        )
        why = focus.get("why")  # FOCUS_EXPLAIN
        if why is not None:
            fields["why"] = why
        if kept is not None:
            fields.update(kept.fields or {})
        content = self.content
        near = self.near_duplicates
        # a copy FOCUS_NEAR_DUPLICATES=drop leaves out is not exported: no content for it
        dropped = duplicate_of is not None and near is not None and near.mode == "drop"
        if content is not None and content.wanted(scored.score) and not dropped:  # once
            if extracted is None:
                extracted = content.extract(response, html, response.url, page.main_text)
            fields.update(extracted.fields())
        # the whole body, kept for the content alone, must not outlive the page (a distributed
        # crawl holds its request until the lease settles)
        response.meta.pop(WHOLE_BODY, None)
        return page_item_class(self._content_mode, why is not None, kept is not None)(**fields)

    def _outlinks(self, page: ExtractedPage, url: str, scored: PageScore,
                  ) -> Iterator[scrapy.Request]:
        """A request per outlink the crawl may follow, with what the frontier needs of it."""
        assert self.topic is not None
        stats = self.crawler.stats
        known_urls = self.known_urls
        ignores = known_urls.ignores if known_urls is not None and known_urls.active else None
        known = 0
        for link in page.links:
            if link.nofollow:
                stats.inc_value("focus/links/nofollow")
                continue
            try:
                target = canonical(link.url)
            except ValueError:
                stats.inc_value("focus/links/not_http")
                continue
            if not self._allowed(target):
                stats.inc_value("focus/links/offsite")
                continue
            if ignores is not None:
                key = request_key(target)
                if key is not None and ignores(key, scored.score, url, link.anchor,
                                               link.context):
                    known += 1
                    continue
            yield scrapy.Request(
                target,
                meta={
                    LINK: {
                        "anchor": link.anchor[:200],
                        "parent": url,
                        "parent_score": scored.score,
                        "parent_hot": scored.hot,
                        "keyword": self.topic.mentions(link.anchor)
                        or self.topic.mentions(target),
                        "context": link.context if self.learning else "",
                        "chrome": link.chrome,
                    }
                },
            )
        if known:  # once per page: a StatsCollector call per link costs more than the check
            stats.inc_value("focus/links/known", known)
