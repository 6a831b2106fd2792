"""Which text should a page be scored on: its visible text, or its main content?

    .venv/bin/python bench/main_text.py [--topic-defs bench/heldout.def.json ...] [--others 4]

Offline, on docweb's own HTML files (no crawl): for each topic, every page docweb judges
relevant and ``--others`` times as many other pages of the same hosts (a fixed random sample),
each scored as the spider scores a page -- the keyword cosine over the title and a text -- on
three texts: the visible text (what ``score`` and Cho's hotness use), the main text of
:func:`focuscrawl.core.extract.extract` (the chrome it recognises left out: what the learned
order's labels and the page classifier use), and the main content trafilatura extracts
(``focuscrawl.core.content`` when it is there, else trafilatura itself).  Prints, per topic set,
each text's AUC against docweb's judgement (the chance a relevant page scores above an
irrelevant one), and the precision and recall of the crawl's relevance rule (a score of at least
``FOCUS_RELEVANT_SCORE``).  The pages are scored in one random order, so the crawl's own IDF
(``FOCUS_IDF``) grows as in a crawl.  Analysis only: the crawler never reads the judgements.
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

from harvest import data_dir, docweb_data, docweb_dir, topics_from  # noqa: E402
from relevance_auc import auc  # noqa: E402

from focuscrawl import config  # noqa: E402
from focuscrawl.core.extract import extract  # noqa: E402
from focuscrawl.core.relevance import Topic, tokenize  # noqa: E402

TEXTS = ("visible", "main (extract)", "main (trafilatura)")


def main_content() -> Any:
    """html, url -> the main content's plain text (content's module if landed, else
    trafilatura's own extract; None when it finds none)."""
    try:
        from focuscrawl.core.content import extract_content  # type: ignore[import-not-found]
    except ImportError:
        import trafilatura

        return lambda html, url: trafilatura.extract(html, url=url, include_comments=False,
                                                     include_tables=True, favor_precision=False)
    return lambda html, url: extract_content(html, url, "text", fallback="").text or None


def read_html(site: Any, url: str) -> str | None:
    parts = urlsplit(url)
    status, found = site.resolve(parts.hostname, parts.path or "/")
    if status != 200 or not found:
        return None
    path, gz = found
    try:
        body = Path(path).read_bytes()
        if gz:
            body = gzip.decompress(body)
    except OSError:
        return None
    return body.decode("utf-8", errors="replace")


def texts_of(html: str, url: str, content: Any) -> tuple[list[str], list[list[str]]]:
    """The title's tokens and the three texts' tokens."""
    page = extract(html, url, with_context=False)
    main = content(html, url)
    return tokenize(page.title), [tokenize(page.text), tokenize(page.main_text),
                                  tokenize(main) if main else tokenize(page.main_text)]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--topic-defs", type=Path, nargs="*", default=[],
                   help="topic definitions (judged by docweb's topics.py); none: docweb's own six")
    p.add_argument("--others", type=float, default=4.0,
                   help="irrelevant pages of the topic's hosts per relevant page")
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args()
    sys.path.insert(0, str(docweb_dir()))
    import serve  # docweb's URL -> file resolver

    site = serve.load_site(str(docweb_data() / "hosts.json"))
    corpus = [json.loads(line) for line in gzip.open(docweb_data() / "corpus.jsonl.gz", "rt")]
    by_host: dict[str, list[str]] = {}
    for row in corpus:
        by_host.setdefault(row["host"], []).append(row["url"])
    sets = [(d.stem, topics_from(d, data_dir())) for d in args.topic_defs] or [
        ("docweb", docweb_data())]
    content = main_content()
    threshold = config.default("FOCUS_RELEVANT_SCORE")
    cache: dict[str, tuple[list[str], list[list[str]]] | None] = {}
    t0 = time.monotonic()
    print(f"{'set':12s} {'topic':4s} {'pages':>5s} {'relevant':>8s} " + " ".join(
        f"{'AUC ' + t:>22s}" for t in TEXTS) + "   precision / recall at the rule, each text")
    for name, folder in sets:
        topics = json.loads((folder / "topics.json").read_text("utf-8"))
        urls = topics["urls"]
        sums = [[0.0, 0] for _ in TEXTS]
        for number, t in enumerate(topics["topics"], 1):
            scores = {urls[k]: s for k, s in t["ranking"]}
            rel = {u for u, s in scores.items() if s >= 0.15}
            hosts = {urlsplit(u).hostname for u in rel}
            others = sorted(u for h in hosts for u in by_host.get(h, []) if u not in rel)
            rng = random.Random(args.seed)
            pages = sorted(rel) + rng.sample(others, min(len(others),
                                                         int(args.others * len(rel))))
            rng.shuffle(pages)
            topic = [Topic(t["keywords"], use_idf=config.default("FOCUS_IDF"))
                     for _ in TEXTS]
            values: list[list[float]] = [[] for _ in TEXTS]
            judged: list[bool] = []
            for url in pages:
                if url not in cache:
                    html = read_html(site, url)
                    cache[url] = texts_of(html, url, content) if html else None
                got = cache[url]
                if got is None:
                    continue
                title, bodies = got
                for i, body in enumerate(bodies):
                    values[i].append(topic[i].score_tokens(title, body).score)
                judged.append(url in rel)
            aucs = [auc(v, judged) for v in values]
            rules = []
            for v in values:
                hit = sum(1 for s, j in zip(v, judged, strict=True) if s >= threshold and j)
                said = sum(1 for s in v if s >= threshold)
                rules.append(f"{hit / said if said else 0:.2f}/{hit / sum(judged):.2f}")
            for i, a in enumerate(aucs):
                sums[i][0] += a
                sums[i][1] += 1
            print(f"{name:12s} {number:4d} {len(judged):5d} {sum(judged):8d} "
                  + " ".join(f"{a:22.3f}" for a in aucs) + "   " + "  ".join(rules), flush=True)
        print(f"{name:12s} mean {'':5s} {'':8s} "
              + " ".join(f"{s / n if n else 0:22.3f}" for s, n in sums))
    print(f"({time.monotonic() - t0:.0f} s; FOCUS_RELEVANT_SCORE {threshold})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
