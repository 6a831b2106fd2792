"""Spider arguments, parsed and validated the same way whether they come from the command line
(``-a name=value``) or from Scrapyd's ``schedule.json`` (always strings).  No Scrapy import.
"""

from __future__ import annotations

import difflib
import inspect
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from focuscrawl.core.content import parse_mode
from focuscrawl.core.orders import STRATEGIES
from focuscrawl.core.relevance import parse_keywords
from focuscrawl.core.urls import allowed_domain, canonical


class ArgumentError(ValueError):
    """A bad spider argument: reported as one line, never as a traceback."""


@dataclass
class CrawlArguments:
    keywords: list[str]
    seeds: list[str] = field(default_factory=list)
    allowed_domains: list[str] = field(default_factory=list)
    frontier: dict[str, Any] = field(default_factory=dict)  # overrides for the scheduler
    render: str = ""  # "" (never) or "js" (render every page with a browser)
    examples: list[str] = field(default_factory=list)  # on-topic pages to learn from
    negatives: list[str] = field(default_factory=list)  # off-topic pages to learn from
    content: str | None = None  # text | markdown | html | none; None: FOCUS_CONTENT decides


@dataclass
class SpiderArguments:
    """What a spider tells focuscrawl's components about its arguments, published as one
    attribute (:data:`ATTRIBUTE`) and read through :func:`arguments_of` only: the scheduler,
    the priority queue, the guards, rendering and the dashboard ask this, never the spider's
    own attributes.  A spider of another project publishes none."""

    raw: dict[str, Any] = field(default_factory=dict)  # as given (-a name=value: strings)
    parsed: CrawlArguments | None = None  # None until validated, or when invalid
    error: str | None = None  # one line, when the arguments are invalid

    @property
    def frontier(self) -> dict[str, Any]:
        """The crawl order's options the arguments override (strategy, max_pages, ...)."""
        return dict(self.parsed.frontier) if self.parsed is not None else {}


#: the spider attribute that holds its :class:`SpiderArguments`
ATTRIBUTE = "focus_arguments"


def arguments_of(spider: Any) -> SpiderArguments | None:
    """The arguments ``spider`` published, or None (no spider, or another project's)."""
    value = getattr(spider, ATTRIBUTE, None)
    return value if isinstance(value, SpiderArguments) else None


#: spider attributes Scrapy's own components read (``-a user_agent=...`` sets one), besides the
#: arguments of ``Spider.__init__`` (``name``); Scrapyd's ``_job`` and any ``_``-prefixed
#: argument a scheduling tool adds are let through too
SCRAPY_ARGUMENTS = frozenset({
    "user_agent", "http_user", "http_pass", "http_auth_domain", "download_timeout",
    "download_maxsize", "download_warnsize", "download_delay", "max_concurrent_requests",
    "handle_httpstatus_list"})
#: an argument of another crawler a user may try, and ours that does its job
INSTEAD = {"start_urls": "seeds"}


def declared_arguments(spidercls: type, base: type) -> set[str]:
    """The arguments ``spidercls`` accepts by name: every ``__init__`` parameter in its class
    hierarchy, and the class attributes its own subclasses of ``base`` declare (Scrapy's idiom:
    a class attribute as the default, ``-a name=value`` to override it)."""
    names: set[str] = set()
    for klass in spidercls.__mro__:
        init = klass.__dict__.get("__init__")
        if init is not None:
            try:
                parameters = inspect.signature(init).parameters.values()
            except (TypeError, ValueError):  # a builtin's: nothing by name
                continue
            names.update(p.name for p in parameters if p.name != "self" and p.kind in (
                inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY))
        if klass is not base and issubclass(klass, base):
            names.update(n for n, v in vars(klass).items()
                         if not n.startswith("_") and not callable(v)
                         and not isinstance(v, (classmethod, staticmethod, property)))
    return names


def unknown_argument(given: Iterable[str], known: Iterable[str]) -> str | None:
    """One line about the first argument not in ``known`` (nor Scrapy's, nor ``_``-prefixed),
    naming the closest known one; None when every argument is known."""
    choices = sorted(set(known) - {"self"})
    for name in given:
        if name in choices or name in SCRAPY_ARGUMENTS or name.startswith("_"):
            continue
        close = INSTEAD.get(name) or next(iter(
            difflib.get_close_matches(name, choices, n=1, cutoff=0.6)), None)
        if close:
            return f"unknown argument {name!r}; did you mean {close}?"
        return f"unknown argument {name!r}; the arguments are: {', '.join(choices)}"
    return None


def _int(name: str, value: Any, minimum: int) -> int:
    try:
        number = int(str(value).strip())
    except ValueError:
        raise ArgumentError(f"{name} must be an integer, got {value!r}") from None
    if number < minimum:
        raise ArgumentError(f"{name} must be at least {minimum}, got {number}")
    return number


def parse_seeds(value: str | list[str] | None, name: str = "seeds") -> list[str]:
    """Comma-separated URLs, or the path of a file with one URL per line (# comments).
    ``name`` is the argument's, for the error's one line."""
    if not value:
        return []
    if isinstance(value, str) and os.path.isfile(value.strip()):
        with open(value.strip(), encoding="utf-8") as f:
            items = [line.split("#", 1)[0].strip() for line in f]
    elif isinstance(value, str):
        if ":" not in value and os.sep in value:
            raise ArgumentError(f"{name} file not found: {value}")
        items = [part.strip() for part in value.replace("\n", ",").replace(" ", ",")
                 .split(",")]
    else:
        items = [str(v).strip() for v in value]
    seeds: list[str] = []
    for item in items:
        if not item:
            continue
        try:
            url = canonical(item)
        except ValueError as e:
            what = "seed" if name == "seeds" else name.rstrip("s")
            raise ArgumentError(f"malformed {what} URL {item!r}: {e}") from None
        if url not in seeds:
            seeds.append(url)
    return seeds


def parse_arguments(
    *,
    keywords: Any = None,
    seeds: Any = None,
    max_pages: Any = None,
    strategy: Any = None,
    allowed_domains: Any = None,
    n: Any = None,
    max_buffer: Any = None,
    seed: Any = None,
    reorder: Any = None,
    render: Any = None,
    examples: Any = None,
    negatives: Any = None,
    revisit: Any = None,
    content: Any = None,
) -> CrawlArguments:
    if keywords is None or not str(keywords).strip():
        raise ArgumentError('keywords are required, e.g. -a keywords="garbage collection"')
    words = parse_keywords(keywords if isinstance(keywords, list) else str(keywords))
    if not words:
        raise ArgumentError(f"keywords {keywords!r} contain only stop words")
    frontier: dict[str, Any] = {}
    if strategy is not None:
        name = str(strategy).strip().lower()
        if name not in STRATEGIES:
            raise ArgumentError(
                f"unknown strategy {strategy!r}; choose one of: {', '.join(STRATEGIES)}"
            )
        frontier["strategy"] = name
    if max_pages is not None:
        frontier["max_pages"] = _int("max_pages", max_pages, 1)
    if n is not None:
        frontier["n"] = _int("n", n, 1)
    if max_buffer is not None:
        frontier["max_buffer"] = _int("max_buffer", max_buffer, 0)
    if seed is not None:
        frontier["seed"] = _int("seed", seed, 0)
    if revisit is not None:
        flag = str(revisit).strip().lower()
        if flag not in ("1", "true", "yes", "0", "false", "no"):
            raise ArgumentError(f"revisit must be true or false, not {revisit!r}")
        frontier["revisit"] = flag in ("1", "true", "yes")
    if reorder is not None:
        value = str(reorder).strip().lower()
        if value not in ("none", "backlinks", "score"):
            raise ArgumentError(f"reorder must be none, backlinks or score, not {reorder!r}")
        frontier["reorder"] = value
    example_urls: list[str] = []
    if examples is not None:
        flag = str(examples).strip().lower()
        if flag in ("1", "true", "yes", "0", "false", "no"):  # the seeds are the examples
            frontier["examples"] = flag in ("1", "true", "yes")
        elif flag == "auto":  # the learned order decides from the seeds' pages
            frontier["examples"] = None
        else:  # pages on the topic, seeds or not
            try:
                example_urls = parse_seeds(examples, "examples")
            except ArgumentError as e:
                raise ArgumentError(f"examples must be true, false, auto or URLs: {e}") from None
    domains: list[str] = []
    if allowed_domains:
        raw = allowed_domains if isinstance(allowed_domains, list) else str(allowed_domains)
        parts = raw if isinstance(raw, list) else raw.split(",")
        try:
            domains = [allowed_domain(d) for d in parts if d.strip()]
        except ValueError as e:
            raise ArgumentError(f"allowed_domains: {e}") from None
    render_mode = str(render or "").strip().lower()
    if render_mode not in ("", "none", "js"):
        raise ArgumentError(f"render must be js or none, not {render!r}")
    try:
        content_mode = parse_mode(content) if content is not None else None
    except ValueError as e:
        raise ArgumentError(str(e)) from None
    return CrawlArguments(
        keywords=words,
        seeds=parse_seeds(seeds),
        allowed_domains=domains,
        frontier=frontier,
        render="js" if render_mode == "js" else "",
        examples=example_urls,
        negatives=parse_seeds(negatives, "negatives"),
        content=content_mode,
    )
