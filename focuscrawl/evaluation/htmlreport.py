"""The crawl report as one self-contained HTML file: four pictures and the best pages.

    python -m focuscrawl.report pages.jsonl --html report.html [--compare other.jsonl]

The pictures are matplotlib SVG written inline (no script, no stylesheet, no image fetched),
so the file opens offline and can be mailed as it is:

* ``harvest`` -- relevant pages and harvest rate against pages fetched, with the ``--compare``
  crawl's curves on the same axes;
* ``hosts`` -- pages fetched and relevant pages per host;
* ``scores`` -- the score distribution, the relevance threshold marked;
* ``best`` -- the best pages' scores as bars, then a table with their titles and links.

A page is relevant when its score is at or above ``--relevant``, as in the text report.
No Scrapy import; matplotlib is imported only here (the ``eval`` extra).
"""

from __future__ import annotations

import html
import io
import os
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

from focuscrawl.evaluation.summary import host_of, is_relevant, read_rows, summarise_rows

FIGURES = ("harvest", "hosts", "scores", "best")  # the sections' ids, in page order
MAX_HOSTS = 15
MAX_BARS = 15


@dataclass
class Crawl:
    """One crawl's pages, in the order they were fetched."""

    label: str
    rows: list[dict[str, Any]]
    bad_lines: int = 0

    def __post_init__(self) -> None:
        # the "order" field is the fetch order; rows without it keep their place in the file
        if all(isinstance(r.get("order"), int) for r in self.rows):
            self.rows = sorted(self.rows, key=lambda r: r["order"])

    @classmethod
    def read(cls, path: str | os.PathLike[str], label: str | None = None) -> Crawl:
        with open(path, encoding="utf-8") as f:
            rows, bad = read_rows(f)
        return cls(label or os.path.splitext(os.path.basename(path))[0], rows, bad)

    def relevant_mask(self, relevant: float) -> np.ndarray:
        return np.fromiter((is_relevant(r, relevant) for r in self.rows), dtype=bool,
                           count=len(self.rows))

    def relevant_urls(self, relevant: float, first: int) -> set[str]:
        return {str(r.get("url")) for r in self.rows[:first] if is_relevant(r, relevant)}


def comparison_line(crawl: Crawl, other: Crawl, relevant: float) -> str:
    """Both crawls' relevant pages within the same number of pages (the shorter crawl's)."""
    k = min(len(crawl.rows), len(other.rows))
    mine, theirs = crawl.relevant_urls(relevant, k), other.relevant_urls(relevant, k)
    return (f"{crawl.label}: {len(mine)} relevant pages in {k}; {other.label}: {len(theirs)} "
            f"in {k}; {len(mine & theirs)} found by both (score >= {relevant})")


# ------------------------------------------------------------------------------ pictures
@contextmanager
def _figure(name: str, width: float, height: float, ncols: int = 1) -> Iterator[Any]:
    import matplotlib

    matplotlib.use("Agg", force=True)  # files only: never a display
    import matplotlib.pyplot as plt

    # text stays text (small, selectable); a per-figure salt keeps ids unique within the page
    # and the file the same from run to run
    with plt.rc_context({"svg.fonttype": "none", "svg.hashsalt": f"focuscrawl-{name}",
                         "font.size": 9}):
        fig, axes = plt.subplots(1, ncols, figsize=(width, height), squeeze=False)
        try:
            yield fig, list(axes[0])
        finally:
            plt.close(fig)


def _svg(fig: Any) -> str:
    buf = io.StringIO()
    fig.tight_layout()
    # no <metadata> block: its RDF namespaces are addresses a reader might take for links
    fig.savefig(buf, format="svg",
                metadata={"Date": None, "Creator": None, "Format": None, "Type": None})
    text = buf.getvalue()
    return text[text.index("<svg"):]  # drop the XML prolog and its DTD address


def _plain(text: str) -> str:
    """Text matplotlib draws as is ("$" would start its math mode)."""
    return text.replace("\\", "\\\\").replace("$", r"\$")


def harvest_svg(crawls: Sequence[Crawl], relevant: float) -> str:
    with _figure("harvest", 10, 3.6, ncols=2) as (fig, (left, right)):
        top_rate = 0.0
        for i, crawl in enumerate(crawls):
            found = np.cumsum(crawl.relevant_mask(relevant))
            x = np.arange(1, len(found) + 1)
            rate = found / x
            top_rate = max(top_rate, float(rate.max(initial=0.0)))
            style = {"color": f"C{i}", "linewidth": 1.6, "label": _plain(crawl.label)}
            left.plot(x, found, **style)
            right.plot(x, rate, **style)
        left.set_title("Relevant pages found")
        left.set_ylabel(f"relevant pages (score ≥ {relevant:g})")
        right.set_title("Harvest rate")
        right.set_ylabel("relevant / fetched")
        right.set_ylim(0, min(1.02, top_rate * 1.15 + 0.02))
        for ax in (left, right):
            ax.set_xlabel("pages fetched")
            ax.grid(True, alpha=0.3)
            ax.set_xlim(left=0)
        left.set_ylim(bottom=0)
        left.legend(loc="upper left")
        return _svg(fig)


def hosts_svg(crawl: Crawl, relevant: float) -> tuple[str, int]:
    """Pages and relevant pages per host, the hosts with most relevant pages first."""
    pages = Counter(host_of(r) for r in crawl.rows)
    rel = Counter(host_of(r) for r in crawl.rows if is_relevant(r, relevant))
    hosts = sorted(pages, key=lambda h: (-rel[h], -pages[h], h))
    shown = hosts[:MAX_HOSTS][::-1]  # barh draws bottom-up
    height = 1.0 + 0.32 * max(len(shown), 1)
    with _figure("hosts", 10, height) as (fig, (ax,)):
        y = np.arange(len(shown))
        ax.barh(y, [pages[h] for h in shown], color="C7", alpha=0.45, label="pages fetched")
        ax.barh(y, [rel[h] for h in shown], color="C2", label=f"relevant (score ≥ {relevant:g})")
        for yi, h in zip(y, shown, strict=True):
            ax.text(pages[h], yi, f" {rel[h]}/{pages[h]}", va="center", fontsize=8)
        ax.set_yticks(y, [_plain(h) for h in shown])
        ax.set_xlabel("pages")
        ax.margins(x=0.12)
        ax.legend(loc="lower right")
        ax.grid(True, axis="x", alpha=0.3)
        return _svg(fig), len(hosts) - len(shown)


def scores_svg(crawls: Sequence[Crawl], relevant: float) -> str:
    with _figure("scores", 10, 3.4) as (fig, (ax,)):
        top = max([relevant * 1.5] + [float(r["score"]) for c in crawls for r in c.rows])
        bins = np.linspace(0.0, top * 1.001, 41)
        for i, crawl in enumerate(crawls):
            scores = [float(r["score"]) for r in crawl.rows]
            if i == 0:
                ax.hist(scores, bins=bins, color="C0", alpha=0.75, label=_plain(crawl.label))
            else:  # an outline, so both distributions stay visible
                ax.hist(scores, bins=bins, histtype="step", color=f"C{i}", linewidth=1.4,
                        label=_plain(crawl.label))
        ax.axvline(relevant, color="C3", linestyle="--", linewidth=1.2,
                   label=f"relevant from {relevant:g}")
        ax.set_yscale("log")  # most pages of a crawl score near zero
        ax.set_xlabel("score")
        ax.set_ylabel("pages (log scale)")
        ax.legend()
        ax.grid(True, alpha=0.3)
        return _svg(fig)


def best_svg(best: Sequence[dict[str, Any]], relevant: float) -> str:
    shown = list(best[:MAX_BARS])[::-1]
    height = 1.0 + 0.3 * max(len(shown), 1)
    with _figure("best", 10, height) as (fig, (ax,)):
        y = np.arange(len(shown))
        colors = ["C1" if r.get("hot") else "C0" for r in shown]
        ax.barh(y, [float(r["score"]) for r in shown], color=colors)
        labels = [_plain(_short(str(r.get("title") or r.get("url", "")), 60)) for r in shown]
        ax.set_yticks(y, labels)
        ax.axvline(relevant, color="C3", linestyle="--", linewidth=1.2)
        ax.set_xlabel("score (orange: hot page)")
        ax.grid(True, axis="x", alpha=0.3)
        return _svg(fig)


def _short(text: str, n: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


# --------------------------------------------------------------------------------- page
STYLE = """body{font-family:sans-serif;max-width:64em;margin:1em auto;padding:0 1em;color:#222}
h1{font-size:1.4em}h2{font-size:1.15em;margin-top:1.6em}
figure{margin:0}figure svg{max-width:100%;height:auto}
figcaption,.note{color:#555;font-size:.9em}
table{border-collapse:collapse;font-size:.9em;width:100%}
td,th{border-bottom:1px solid #ddd;padding:.25em .5em;text-align:left;vertical-align:top}
td.n{text-align:right;font-variant-numeric:tabular-nums}
dl{display:grid;grid-template-columns:max-content auto;gap:.2em 1em}dt{font-weight:bold}"""


def _section(ident: str, title: str, svg: str, caption: str, extra: str = "") -> str:
    return (f'<section id="{ident}">\n<h2>{html.escape(title)}</h2>\n<figure>\n{svg}\n'
            f"<figcaption>{caption}</figcaption>\n</figure>\n{extra}</section>")


def _table(best: Sequence[dict[str, Any]], relevant: float) -> str:
    rows = []
    for i, r in enumerate(best, 1):
        url = str(r.get("url", ""))
        title = str(r.get("title") or url)
        rows.append(
            f'<tr><td class="n">{i}</td><td class="n">{float(r["score"]):.3f}</td>'
            f"<td>{'hot' if r.get('hot') else ''}</td>"
            f'<td class="n">{html.escape(str(r.get("order") or "?"))}</td>'
            f'<td><a href="{html.escape(url)}">{html.escape(_short(title, 90))}</a><br>'
            f'<span class="note">{html.escape(url)}</span></td></tr>')
    return ('<table>\n<thead><tr><th>#</th><th>score</th><th>hot</th><th>fetched as</th>'
            "<th>page</th></tr></thead>\n<tbody>\n" + "\n".join(rows) + "\n</tbody>\n</table>\n")


def render_html(crawl: Crawl, *, relevant: float = 0.1, top: int = 20,
                compare: Crawl | None = None) -> str:
    s = summarise_rows(crawl.rows, crawl.bad_lines, relevant, top)
    crawls = [crawl] + ([compare] if compare is not None else [])
    title = f"focuscrawl report: {crawl.label}"
    facts = [("pages", f"{s.pages} from {len(s.hosts)} hosts"),
             ("relevant", f"{s.relevant} (score ≥ {relevant:g}): harvest rate "
                          f"{s.harvest_rate:.1%}"),
             ("hot pages", str(s.hot))]
    if s.near_duplicates:
        facts.insert(2, ("near-duplicates", f"{s.near_duplicates} pages whose main text is a "
                                            "near-copy of one exported before: no new harvest"))
    if s.languages:  # the main text's language (-a content), page shares
        facts.append(("languages", html.escape(s.language_mix())))
    if s.bad_lines:
        facts.append(("unreadable lines", f"{s.bad_lines} skipped"))
    if compare is not None:
        facts.append(("compared with", html.escape(comparison_line(crawl, compare, relevant))))
    facts_html = "".join(f"<dt>{html.escape(k)}</dt><dd>{v}</dd>" for k, v in facts)
    host_svg, more_hosts = hosts_svg(crawl, relevant)
    curve_note = ("" if compare is None else
                  f" Beside it, {html.escape(compare.label)} on the same axes.")
    sections = [
        _section("harvest", "Harvest curve", harvest_svg(crawls, relevant),
                 "Left: relevant pages found so far; right: the share of the pages fetched so "
                 f"far that are relevant.{curve_note}"),
        _section("hosts", "Relevant pages per host", host_svg,
                 "Grey: pages fetched from the host; green: the relevant ones."
                 + (f" {more_hosts} more hosts not shown." if more_hosts else "")),
        _section("scores", "Score distribution", scores_svg(crawls, relevant),
                 f"Pages by score; the dashed line is the relevance threshold {relevant:g}."),
        _section("best", "Best pages", best_svg(s.top, relevant),
                 f"The {len(s.top)} pages with the highest scores.", _table(s.top, relevant)),
    ]
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            f"<title>{html.escape(title)}</title>\n<style>\n{STYLE}\n</style>\n</head>\n<body>\n"
            f"<h1>{html.escape(title)}</h1>\n<dl>{facts_html}</dl>\n"
            + "\n".join(sections) + "\n</body>\n</html>\n")


def write_html(path: str | os.PathLike[str], crawl: Crawl, *, relevant: float = 0.1,
               top: int = 20, compare: Crawl | None = None) -> None:
    text = render_html(crawl, relevant=relevant, top=top, compare=compare)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
