"""What a page states about itself in its markup: dates, author, description, canonical URL.

No Scrapy import.  Read from meta tags (Open Graph, Dublin Core, article:*), schema.org
microdata (``itemprop``) and JSON-LD, over either parsed tree the content extractors make
(lxml's, for trafilatura; Lexbor's, for resiliparse): each gives :class:`Sources`, read the
same way.  Nothing is guessed from the text (htmldate's search of the text would date a page
by any date it mentions): a field the page does not state is None.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import date
from typing import Any
from urllib.parse import urljoin

_PUBLISHED = ("article:published_time", "og:published_time", "article:published",
              "datepublished", "dcterms.created", "dcterms.issued", "dc.date.issued",
              "dc.date.created", "dc.date", "date", "pubdate", "publishdate", "publish-date",
              "publish_date", "article.published", "parsely-pub-date", "sailthru.date")
_MODIFIED = ("article:modified_time", "og:updated_time", "og:modified_time",
             "article:modified", "datemodified", "dcterms.modified", "dc.date.modified",
             "dc.modified", "last-modified", "lastmodified", "modified", "modified_time",
             "updated_time", "article.updated")
_AUTHOR = ("author", "article:author", "og:article:author", "dc.creator", "dcterms.creator",
           "parsely-author", "sailthru.author", "byl")
_DESCRIPTION = ("description", "og:description", "twitter:description", "dc.description")
_ISO_DATE_RE = re.compile(r"\s*(\d{4})-(\d{1,2})-(\d{1,2})")


@dataclass
class Sources:
    """The markup a page states its metadata in, as found in one parsed tree."""

    metas: dict[str, str] = field(default_factory=dict)  # name/property/itemprop -> content
    items: dict[str, str] = field(default_factory=dict)  # itemprop -> datetime/content/text
    json_ld: list[str] = field(default_factory=list)  # the JSON-LD scripts' text
    canonical: str | None = None  # <link rel=canonical href>

    def meta(self, name: str, value: str | None) -> None:
        if name and value and value.strip():
            self.metas.setdefault(name.strip().lower(), value.strip())


@dataclass(frozen=True)
class Stated:
    published: str | None = None  # YYYY-MM-DD
    modified: str | None = None
    author: str | None = None
    description: str | None = None
    canonical: str | None = None  # absolute


def iso_date(value: Any) -> str | None:
    """YYYY-MM-DD from an ISO 8601 date or date-time, or None."""
    match = _ISO_DATE_RE.match(value) if isinstance(value, str) else None
    if match is None:
        return None
    try:
        return date(*(int(g) for g in match.groups())).isoformat()
    except ValueError:
        return None


def _clean(value: Any) -> str | None:
    return " ".join(value.split())[:500] or None if isinstance(value, str) else None


def _names(value: Any) -> str | None:
    """A JSON-LD author: a name, a Person/Organization, or a list of them ("; "-joined)."""
    if isinstance(value, str):
        return _clean(value)
    if isinstance(value, dict):
        return _names(value.get("name"))
    if isinstance(value, list):
        names = [n for n in (_names(v) for v in value) if n]
        return "; ".join(dict.fromkeys(names)) or None
    return None


def _objects(data: Any) -> list[dict[str, Any]]:
    """The JSON-LD objects, ``@graph`` and lists flattened."""
    if isinstance(data, list):
        return [o for item in data for o in _objects(item)]
    if isinstance(data, dict):
        return [data, *_objects(data.get("@graph"))]
    return []


def _from_json_ld(scripts: list[str]) -> dict[str, str]:
    found: dict[str, str] = {}
    for script in scripts:
        try:
            objects = _objects(json.loads(script))
        except (ValueError, RecursionError):
            continue
        for obj in objects:
            for key, read in (("datePublished", iso_date), ("dateModified", iso_date),
                              ("author", _names), ("description", _clean)):
                value = read(obj.get(key))
                if value:
                    found.setdefault(key, value)
    return found


def _first(metas: dict[str, str], names: tuple[str, ...], read: Any) -> str | None:
    for name in names:
        value = read(metas.get(name))
        if value:
            return str(value)
    return None


def stated(sources: Sources, url: str) -> Stated:
    """The metadata ``sources`` state, JSON-LD first (it is the most explicit), then
    microdata, then meta tags; the canonical URL resolved against ``url``."""
    ld = _from_json_ld(sources.json_ld)
    items, metas = sources.items, sources.metas

    def either(key: str, names: tuple[str, ...], read: Any) -> str | None:
        return (ld.get(key) or read(items.get(key.lower())) or _first(metas, names, read))

    author = either("author", _AUTHOR, _clean)
    if author and author.startswith(("http://", "https://")):
        author = None  # article:author is often the author's page, not a name
    canonical = sources.canonical or metas.get("og:url")
    try:
        canonical = urljoin(url, canonical) if canonical else None
    except ValueError:
        canonical = None
    return Stated(
        published=either("datePublished", _PUBLISHED, iso_date),
        modified=either("dateModified", _MODIFIED, iso_date),
        author=author,
        description=ld.get("description") or _first(metas, _DESCRIPTION, _clean),
        canonical=canonical,
    )


_ITEMPROPS = ("datepublished", "datemodified", "author")
# only the elements read (a selector of every [itemprop] wraps hundreds of nodes in Python)
_ITEMPROP_SELECTOR = ", ".join(f'[itemprop="{p}" i]' for p in _ITEMPROPS)


def lxml_sources(tree: Any) -> Sources:
    """:class:`Sources` of an lxml tree."""
    found = Sources()
    for meta in tree.iterfind(".//meta[@content]"):
        found.meta(meta.get("property") or meta.get("name") or meta.get("itemprop") or "",
                   meta.get("content"))
    for element in tree.iterfind(".//*[@itemprop]"):
        prop = (element.get("itemprop") or "").strip().lower()
        if prop in _ITEMPROPS and prop not in found.items:
            value = (element.get("datetime") or element.get("content")
                     or " ".join(element.itertext()))
            if value and value.strip():
                found.items[prop] = value.strip()
    for script in tree.iterfind(".//script[@type]"):
        if script.get("type", "").strip().lower() == "application/ld+json" and script.text:
            found.json_ld.append(script.text)
    for link in tree.iterfind(".//link[@href]"):
        if "canonical" in (link.get("rel") or "").lower().split():
            found.canonical = link.get("href", "").strip() or None
            break
    return found


def lexbor_sources(tree: Any) -> Sources:
    """:class:`Sources` of a resiliparse ``HTMLTree``."""
    found = Sources()
    document = tree.document
    if document is None:
        return found
    for meta in document.query_selector_all("meta[content]"):
        found.meta(meta.getattr("property") or meta.getattr("name")
                   or meta.getattr("itemprop") or "", meta.getattr("content"))
    for element in document.query_selector_all(_ITEMPROP_SELECTOR):
        prop = (element.getattr("itemprop") or "").strip().lower()
        if prop in _ITEMPROPS and prop not in found.items:
            value = (element.getattr("datetime") or element.getattr("content")
                     or element.text)
            if value and value.strip():
                found.items[prop] = value.strip()
    for script in document.query_selector_all('script[type="application/ld+json" i]'):
        if script.text:
            found.json_ld.append(script.text)
    for link in document.query_selector_all('link[rel~="canonical" i][href]'):
        if "canonical" in (link.getattr("rel") or "").lower().split():
            found.canonical = (link.getattr("href") or "").strip() or None
            break
    return found
