"""JavaScript rendering: which requests a real browser fetches, and the settings that make it so.

Off by default: a browser costs a few seconds to start and far more memory and CPU per page than
an HTTP download, and most of the web needs none.  It is switched on for a crawl by

* ``FOCUS_RENDER = "js"`` (or the ``topic`` spider's ``-a render=js``): render every page;
* ``FOCUS_RENDER_DOMAINS = "app.example.com,spa.example.org"``: render only those hosts (and
  their subdomains); every other page is downloaded as usual.

:func:`configure_rendering` runs before the crawler's settings freeze (from the spider's
``from_crawler`` or from the add-on).  Only when rendering is on does it install
scrapy-playwright's download handler for http/https (:mod:`focuscrawl.seam.browser`, without
Twisted's silent re-send) -- so nothing starts a browser otherwise --
and :class:`RenderMiddleware`, which marks the requests to render with ``meta["playwright"]``.
The mark is set in the downloader, after the scheduler handed the request out, so rendered
requests go through the same frontier order and the same per-server politeness as any other;
the browser receives the page's subresources (scripts, fetch() calls) itself.

The browser is the system Chromium (``apt-get install chromium``): no browser is downloaded.
"""

from __future__ import annotations

import logging
import os
import shutil
from typing import TYPE_CHECKING, Any

from scrapy.exceptions import NotConfigured
from scrapy.utils.url import url_is_from_any_domain

from focuscrawl import config
from focuscrawl.seam.arguments import arguments_of

if TYPE_CHECKING:
    from scrapy import Request, Spider
    from scrapy.crawler import Crawler
    from scrapy.settings import BaseSettings

logger = logging.getLogger(__name__)

PLAYWRIGHT_HANDLER = "focuscrawl.seam.browser.RenderingDownloadHandler"
#: handlers that render: focuscrawl's, and scrapy-playwright's own named by a project
RENDERING_HANDLERS = (PLAYWRIGHT_HANDLER,
                      "scrapy_playwright.handler.ScrapyPlaywrightDownloadHandler")
MIDDLEWARE = "focuscrawl.seam.render.RenderMiddleware"
MIDDLEWARE_ORDER = 940  # just before PolitenessMiddleware (950): both only touch meta / wait
RENDER_MODES = ("", "none", "js")
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")

# Chromium flags for a headless crawler: no GPU, and none of Chromium's own background traffic
# (updates, sync, safe-browsing lists), which a crawl machine neither wants nor always can reach.
CHROMIUM_ARGS = (
    "--headless",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
)
# Resource types the browser does not fetch: they never change a page's text or links, and
# skipping them spares the server (politeness) and the crawl (time).
BLOCKED_RESOURCES = frozenset({"image", "media", "font"})


def parse_mode(value: Any) -> str:
    """``"js"`` or ``""`` from a setting or a spider argument (a string from Scrapyd too)."""
    mode = str(value or "").strip().lower()
    if mode not in RENDER_MODES:
        raise ValueError(f"render must be js or none, not {value!r}")
    return "js" if mode == "js" else ""


def parse_domains(value: Any) -> list[str]:
    """FOCUS_RENDER_DOMAINS as a list: a comma-separated string or a list of hosts/domains."""
    parts = value.split(",") if isinstance(value, str) else list(value or [])
    return [str(p).strip().lower().lstrip(".") for p in parts if str(p).strip()]


def spider_mode(spider: Spider | None) -> str | None:
    """The render mode a spider was started with (``-a render=js|none``), or None if not given."""
    if spider is None:
        return None
    published = arguments_of(spider)
    raw = published.raw.get("render") if published is not None else None
    if raw is None:
        raw = getattr(spider, "render", None)  # any other spider: Scrapy sets -a name=value
    if not isinstance(raw, str):
        return None
    try:
        return parse_mode(raw)
    except ValueError:
        return None  # the spider reports its own bad arguments


def rendering_enabled(settings: BaseSettings) -> bool:
    return bool(parse_mode(config.get(settings, "FOCUS_RENDER"))
                or parse_domains(config.get(settings, "FOCUS_RENDER_DOMAINS")))


def chromium_path(settings: BaseSettings) -> str:
    path = config.get(settings, "FOCUS_CHROMIUM_PATH") or ""
    if path:
        return path
    for name in CHROMIUM_NAMES:
        found = shutil.which(name)
        if found:
            return found
    raise NotConfigured(
        "rendering is on but no Chromium was found: apt-get install chromium, "
        "or set FOCUS_CHROMIUM_PATH"
    )


def launch_options(settings: BaseSettings) -> dict[str, Any]:
    """PLAYWRIGHT_LAUNCH_OPTIONS for the system Chromium."""
    args = list(CHROMIUM_ARGS)
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        args.append("--no-sandbox")  # Chromium refuses to run as root with its sandbox on
    options: dict[str, Any] = {"executable_path": chromium_path(settings), "args": args}
    proxy = config.get(settings, "FOCUS_RENDER_PROXY") or os.environ.get("http_proxy") \
        or os.environ.get("HTTP_PROXY")
    if proxy:
        server: dict[str, str] = {"server": proxy}
        bypass = os.environ.get("no_proxy") or os.environ.get("NO_PROXY")
        if bypass:
            server["bypass"] = bypass
        options["proxy"] = server
    return options


def abort_request(request: Any) -> bool:
    """PLAYWRIGHT_ABORT_REQUEST: skip the subresources that cannot change text or links."""
    return request.resource_type in BLOCKED_RESOURCES


def configure_rendering(settings: BaseSettings, mode: str | None = None) -> bool:
    """Switch rendering on in ``settings`` (not yet frozen) if ``mode`` or the settings ask.

    ``mode`` is the spider argument (``"js"``), which wins over ``FOCUS_RENDER``.  Returns
    whether rendering is on.  Idempotent; settings the user gave explicitly are kept.
    """
    if mode is not None:
        settings.set("FOCUS_RENDER", parse_mode(mode), priority="spider")
    if not rendering_enabled(settings):
        return False
    handlers = settings.getdict("DOWNLOAD_HANDLERS")
    for scheme in ("http", "https"):
        if handlers.get(scheme, config.HTTP_HANDLER) == config.HTTP_HANDLER:
            handlers[scheme] = PLAYWRIGHT_HANDLER  # focuscrawl's own is replaced, not a user's
        current = handlers[scheme]
        if current not in RENDERING_HANDLERS:
            logger.warning("DOWNLOAD_HANDLERS[%r] is %s: %s pages will not be rendered",
                           scheme, current, scheme)
    priority = max(settings.getpriority("DOWNLOAD_HANDLERS") or 0, 30)  # 30: "spider"
    settings.set("DOWNLOAD_HANDLERS", handlers, priority=priority)
    settings.setdefault("PLAYWRIGHT_BROWSER_TYPE", "chromium")
    if not settings.getdict("PLAYWRIGHT_LAUNCH_OPTIONS"):
        settings.set("PLAYWRIGHT_LAUNCH_OPTIONS", launch_options(settings), priority="spider")
    if not settings.get("PLAYWRIGHT_ABORT_REQUEST"):
        settings.set("PLAYWRIGHT_ABORT_REQUEST", abort_request, priority="spider")
    if settings.get("PLAYWRIGHT_DEFAULT_NAVIGATION_TIMEOUT") is None:
        # a rendered page gets the same time limit as a downloaded one (Pant et al.: 10 s)
        timeout_ms = settings.getfloat("DOWNLOAD_TIMEOUT", 180) * 1000
        settings.set("PLAYWRIGHT_DEFAULT_NAVIGATION_TIMEOUT", timeout_ms, priority="spider")
    middlewares = settings.getdict("DOWNLOADER_MIDDLEWARES")
    if MIDDLEWARE not in middlewares:
        middlewares[MIDDLEWARE] = MIDDLEWARE_ORDER
        priority = max(settings.getpriority("DOWNLOADER_MIDDLEWARES") or 0, 30)
        settings.set("DOWNLOADER_MIDDLEWARES", middlewares, priority=priority)
    return True


class RenderMiddleware:
    """Marks the requests to render (``meta["playwright"] = True``); the rest download as usual.

    Only GET requests for pages are rendered: robots.txt and form posts are left to Scrapy's
    HTTP handler.  A request that already says ``meta["playwright"]`` (True or False) is left
    alone, so a spider can decide per request.
    """

    def __init__(self, crawler: Crawler, render_all: bool, domains: list[str],
                 wait_until: str) -> None:
        self.crawler = crawler
        self.render_all = render_all
        self.domains = domains
        self.wait_until = wait_until

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RenderMiddleware:
        s = crawler.settings
        render_all = parse_mode(config.get(s, "FOCUS_RENDER")) == "js"
        domains = parse_domains(config.get(s, "FOCUS_RENDER_DOMAINS"))
        if not render_all and not domains:
            raise NotConfigured("rendering is off (FOCUS_RENDER, FOCUS_RENDER_DOMAINS)")
        wait_until = config.get(s, "FOCUS_RENDER_WAIT_UNTIL") or config.default(
            "FOCUS_RENDER_WAIT_UNTIL")
        return cls(crawler, render_all, domains, wait_until)

    def wants(self, request: Request) -> bool:
        if request.method != "GET" or request.url.split("?", 1)[0].endswith("/robots.txt"):
            return False
        return self.render_all or url_is_from_any_domain(request.url, self.domains)

    def process_request(self, request: Request) -> None:
        meta = request.meta
        if "playwright" not in meta and self.wants(request):
            meta["playwright"] = True
            meta.setdefault("playwright_page_goto_kwargs", {"wait_until": self.wait_until})
        if meta.get("playwright"):
            self.crawler.stats.inc_value("focus/render/requests")
        return None
