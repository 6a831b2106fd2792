"""A small web with known near-copies, for the near-duplicate tests.

Articles of pseudo-random prose (each with words of its own) on ``news.test``, and copies of
them as the web has them:

* **other navigation**: the same article in a topic section of the site, with another menu,
  banner and sidebar (``/topics/<i>.html``);
* **printer-friendly**: ``/print/<i>.html``, no navigation at all and a "printed from" line;
* **a mirror host**: ``mirror.test`` serves copies in a template of its own;
* **only a date differs**: ``/archive/<i>.html``, the article whose dateline has another date.

And pages that look alike but are no near-copies (similarity of their 5-word shingles under
0.9): *condensed* versions (a paragraph of five cut), a *series* whose articles open with the
same paragraph, and the hubs that link everything.  :data:`GROUP` maps each URL to its group:
the pages of a group are near-copies of each other, a group of one is a page with no copy.
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

from focuscrawl.demo.webserver import Page

KEYWORDS = "velnor"
SEED_URL = "http://news.test/index.html"
ARTICLES = 30
OTHER_NAV = range(0, 10)
PRINTED = range(5, 15)
MIRRORED = range(10, 20)
REDATED = range(15, 25)
CONDENSED = range(20, 28)
SERIES = range(25, 30)  # open with article 25's first paragraph
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December")


def _vocabulary(rng: random.Random, size: int = 4000) -> list[str]:
    syllables = [c + v for c in "bcdfghjklmnprstvwz" for v in ("a", "e", "i", "o", "u", "ai",
                                                              "ou")]
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(syllables) for _ in range(rng.randint(1, 3))))
    return sorted(words)


def _paragraph(rng: random.Random, vocabulary: list[str]) -> str:
    words = [rng.choice(vocabulary) for _ in range(rng.randint(45, 60))]
    for _ in range(2):
        words[rng.randrange(len(words))] = KEYWORDS
    return " ".join(words).capitalize() + "."


class Article:
    def __init__(self, i: int, rng: random.Random, vocabulary: list[str]) -> None:
        self.i = i
        self.title = " ".join(rng.choice(vocabulary) for _ in range(4)).title()
        self.author = " ".join(rng.choice(vocabulary) for _ in range(2)).title()
        self.paragraphs = [_paragraph(rng, vocabulary) for _ in range(5)]
        self.date = (rng.randint(1, 28), rng.choice(_MONTHS), rng.randint(2019, 2024))

    def dateline(self, date: tuple[int, str, int] | None = None) -> str:
        day, month, year = date or self.date
        return f"Published {day} {month} {year} by {self.author}"

    def body(self, paragraphs: Iterable[str] | None = None,
             date: tuple[int, str, int] | None = None) -> str:
        ps = "".join(f"<p>{p}</p>" for p in (self.paragraphs if paragraphs is None
                                                else paragraphs))
        return (f'<article><h1>{self.title}</h1><p class="dateline">{self.dateline(date)}</p>'
                f"{ps}</article>")


def _news(title: str, body: str, links: list[str]) -> str:
    menu = "".join(f'<li><a href="{u}">{text}</a></li>' for u, text in (
        ("/index.html", "Front page"), ("/topics/index.html", "Topics"),
        ("/archive/index.html", "Archive"), ("/print/index.html", "Print editions")))
    more = "".join(f'<li><a href="{u}">{u}</a></li>' for u in links)
    return (f"<html><head><title>{title} - News</title></head><body>"
            f"<header><div>The Daily News</div><nav><ul>{menu}</ul></nav></header>"
            f"<main>{body}</main><aside><h2>Most read</h2><ul>{more}</ul></aside>"
            "<footer>Copyright The Daily News. All rights reserved. Contact us.</footer>"
            "</body></html>")


def _topics(title: str, body: str, links: list[str]) -> str:
    more = "".join(f'<a href="{u}">{u}</a> ' for u in links)
    return (f"<html><head><title>{title} | Topics</title></head><body>"
            '<div class="topbar">Topics desk: science, places, people, ideas</div>'
            '<div id="breadcrumbs"><a href="/index.html">Home</a> / Topics</div>'
            f'<div class="content">{body}</div>'
            f'<div class="sidebar">In this section: {more}</div>'
            '<div class="footer">Topics desk, a section of The Daily News</div>'
            "</body></html>")


def _printed(article: Article, url: str) -> str:
    return (f"<html><head><title>{article.title} (print)</title></head><body>"
            f"{article.body()}<p>Printed from {url}</p></body></html>")


def _mirror(title: str, body: str, links: list[str]) -> str:
    nav = " | ".join(f'<a href="{u}">{u}</a>' for u in links)
    return (f"<html><head><title>{title} [mirror]</title></head><body>"
            f'<div role="banner">Mirror of The Daily News, refreshed daily</div>'
            f'<div role="navigation">{nav}</div>{body}'
            '<div role="contentinfo">This mirror is not affiliated with the original.</div>'
            "</body></html>")


def _other_date(date: tuple[int, str, int]) -> tuple[int, str, int]:
    day, month, year = date
    return (day % 28 + 3, _MONTHS[(_MONTHS.index(month) + 5) % 12], year - 1)


def build(seed: int = 56, seed_delay_ms: float = 0.0
          ) -> tuple[dict[str, dict[str, Page]], dict[str, str]]:
    """The web (host -> path -> page) and each URL's group.  ``seed_delay_ms``: the seed page
    is that slow, so distributed workers started together are all up before its outlinks are
    (however slowly a loaded machine starts them), and the crawl is shared."""
    rng = random.Random(seed)
    vocabulary = _vocabulary(rng)
    articles = [Article(i, rng, vocabulary) for i in range(ARTICLES)]
    for i in SERIES[1:]:
        articles[i].paragraphs[0] = articles[SERIES[0]].paragraphs[0]
    news: dict[str, Page] = {}
    mirror: dict[str, Page] = {}
    group: dict[str, str] = {}

    def put(site: dict[str, Page], host: str, path: str, html: str, g: str) -> str:
        site[path] = Page(html)
        url = f"http://{host}{path}"
        group[url] = g
        return url

    paths = [f"/articles/{a.i}.html" for a in articles]
    for a in articles:
        most_read = [paths[(a.i + k) % ARTICLES] for k in (1, 2, 3)]
        put(news, "news.test", paths[a.i], _news(a.title, a.body(), most_read), f"a{a.i}")
    topics = [put(news, "news.test", f"/topics/{i}.html",
                  _topics(articles[i].title, articles[i].body(),
                          [f"/topics/{j}.html" for j in OTHER_NAV if j != i][:4]), f"a{i}")
              for i in OTHER_NAV]
    printed = [put(news, "news.test", f"/print/{i}.html",
                   _printed(articles[i], f"http://news.test{paths[i]}"), f"a{i}")
               for i in PRINTED]
    redated = [put(news, "news.test", f"/archive/{i}.html",
                   _news(articles[i].title, articles[i].body(date=_other_date(articles[i].date)),
                         paths[:3]), f"a{i}") for i in REDATED]
    condensed = [put(news, "news.test", f"/briefs/{i}.html",
                     _news(articles[i].title, articles[i].body(articles[i].paragraphs[:4]),
                           paths[:3]), f"brief{i}") for i in CONDENSED]
    mirrored = [put(mirror, "mirror.test", f"/{i}.html",
                    _mirror(articles[i].title, articles[i].body(),
                            ["/index.html"] + [f"/{j}.html" for j in MIRRORED if j != i][:3]),
                    f"a{i}") for i in MIRRORED]

    def hub(title: str, urls: list[str]) -> str:
        items = "".join(f'<li><a href="{u}">{title} entry {n}: {u}</a></li>'
                        for n, u in enumerate(urls))
        return (f"<h1>{title}</h1><p>Everything in {title.lower()}, newest first.</p>"
                f"<ul>{items}</ul>")

    full = [f"http://news.test{p}" for p in paths]
    put(news, "news.test", "/index.html",
        _news("Front page", hub("Front page", full + condensed + ["http://mirror.test/index.html"]),
              []), "hub-front")
    news["/index.html"].delay_ms = seed_delay_ms
    put(news, "news.test", "/topics/index.html",
        _topics("Topics", hub("Topics", topics), []), "hub-topics")
    put(news, "news.test", "/print/index.html",
        _news("Print editions", hub("Print editions", printed), []), "hub-print")
    put(news, "news.test", "/archive/index.html",
        _news("Archive", hub("Archive", redated), []), "hub-archive")
    put(mirror, "mirror.test", "/index.html",
        _mirror("Mirror", hub("Mirror", mirrored), []), "hub-mirror")
    return {"news.test": news, "mirror.test": mirror}, group


def expected_copies(group: Mapping[str, str], exported: Iterable[str]) -> int:
    """Pages that should be marked among ``exported``: all but one of each group."""
    sizes = Counter(group[u] for u in exported)
    return sum(n - 1 for n in sizes.values())


def precision_recall(items: list[dict[str, Any]], group: Mapping[str, str]
                     ) -> tuple[float, float, dict[str, Any]]:
    """Precision and recall of the ``duplicate_of`` marks of a crawl's items against the
    groups: a mark is right when it names a page of the same group; a group of n pages
    exported should have n - 1 marked.  Also the evidence, for a failing assertion."""
    marked = [i for i in items if i.get("duplicate_of")]
    right = [i for i in marked if group.get(i["duplicate_of"]) == group[i["url"]]]
    should = expected_copies(group, [i["url"] for i in items])
    precision = len(right) / len(marked) if marked else 1.0
    recall = len(right) / should if should else 1.0
    wrong = [(i["url"], i["duplicate_of"]) for i in marked if i not in right]
    unmarked: dict[str, list[str]] = defaultdict(list)
    for i in items:
        if not i.get("duplicate_of"):
            unmarked[group[i["url"]]].append(i["url"])
    missed = {g: urls for g, urls in unmarked.items() if len(urls) > 1}
    return precision, recall, {"marked": len(marked), "should": should, "wrong": wrong,
                               "missed": missed}


def mirror_web(articles: int = 20, seed: int = 7) -> dict[str, dict[str, Page]]:
    """A site whose articles each link to their copy on a mirror host and to a distinct
    article on another host: ``a.test`` (the seed's host, an index of its articles),
    ``mirror.test`` (each page a copy of the a.test page that links to it) and ``b.test``
    (articles linking to the next), every article on the topic.  A crawl that learns the
    mirror gives nothing new spends its pages on ``b.test``."""
    rng = random.Random(seed)
    vocabulary = _vocabulary(rng)
    originals = [Article(i, rng, vocabulary) for i in range(articles)]
    others = [Article(i, rng, vocabulary) for i in range(articles)]
    a: dict[str, Page] = {}
    m: dict[str, Page] = {}
    b: dict[str, Page] = {}
    nxt = [(i + 1) % articles for i in range(articles)]
    for i, art in enumerate(originals):
        links = [f"http://mirror.test/{i}.html", f"http://b.test/{i}.html"]
        a[f"/{i}.html"] = Page(_news(art.title, art.body(), links))
        m[f"/{i}.html"] = Page(_mirror(art.title, art.body(), ["http://a.test/index.html"]))
    for i, art in enumerate(others):
        b[f"/{i}.html"] = Page(_topics(art.title, art.body(), [f"/{nxt[i]}.html"]))
    a["/index.html"] = Page(_news("Front page", "<h1>Front page</h1>", [
        f"/{i}.html" for i in range(articles)]))
    return {"a.test": a, "mirror.test": m, "b.test": b}
