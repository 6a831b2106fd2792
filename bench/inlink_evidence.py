"""What a URL's in-links say about it before it is fetched: how well each piece of link evidence
ranks the pages of a topic's main host, as an AUC against docweb's judgement.

    .venv/bin/python bench/inlink_evidence.py [--topic-defs bench/heldout.def.json ...]
        [--task examples] [--hosts 1] [--out results.json]

Offline: every page of docweb's corpus is parsed with the crawler's own ``extract()`` (its
links, each with its anchor text, the text around it and whether it sits in the navigation), so
each page's in-links are known as a crawl that fetched every linking page would know them.  Per
topic, the pages of the ``--hosts`` hosts with the most relevant pages (judge score >= 0.15) are
ranked by:

- ``best parent``: the best keyword cosine among the pages linking there (best-first's value);
- ``words, best parent's link``: a keyword in the anchor or context of the link from that best
  parent (what a crawl keeps when it keeps one link per URL, its best parent's);
- ``words, any in-link``: a keyword in the anchor or context of any in-link (what the learned
  order keeps: a link whose words name the topic counts whatever its parent);
- ``anchor+context cosine``: the best keyword cosine of an in-link's anchor and context;
- ``in-links``: how many pages link there;
- ``the page itself``: its own keyword cosine, known only once fetched (for scale).

Hindsight, not a crawl: every in-link is counted, not only those from pages a crawl has
fetched.  Analysis only: the crawler never reads the judgements.  Parsing the corpus takes a
few minutes; ``--cache`` keeps the parsed links for the next run.
"""

from __future__ import annotations

import argparse
import gzip
import json
import pickle
import statistics
import sys
from collections import Counter
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import numpy as np
from sklearn.metrics import roc_auc_score

ROOT = Path(__file__).resolve().parent.parent
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

from harvest import data_dir, docweb_data, docweb_dir, topics_from  # noqa: E402, I001

from focuscrawl.core.extract import extract  # noqa: E402
from focuscrawl.core.relevance import Topic, tokenize  # noqa: E402

THRESHOLD = 0.15  # docweb's relevant pages, as simulate.py counts them
EVIDENCE = ("best parent", "words, best parent's link", "words, any in-link",
            "anchor+context cosine", "in-links", "the page itself")
TASK_SEEDS = {"examples": "from_examples", "neighbors": "from_neighbors"}


def parse_corpus() -> dict[str, Any]:
    """Every corpus page's main text and in-links ``(source, anchor, context)``, read from the
    files docweb serves (through its own URL resolver) and parsed by the crawler's extract()."""
    sys.path.insert(0, str(docweb_dir()))
    import serve  # docweb's server module: its Site maps a URL to the file it serves

    site = serve.load_site(str(docweb_data() / "hosts.json"))
    with gzip.open(docweb_data() / "corpus.jsonl.gz", "rt") as f:
        urls = [json.loads(line)["url"] for line in f]
    index = {u: i for i, u in enumerate(urls)}
    inlinks: list[list[tuple[int, str, str]]] = [[] for _ in urls]
    main = [""] * len(urls)
    for i, url in enumerate(urls):
        parts = urlsplit(url)
        status, found = site.resolve(parts.hostname, parts.path)
        if status != 200:
            continue
        path, gz = found
        data = Path(path).read_bytes()
        page = extract((gzip.decompress(data) if gz else data).decode("utf-8", "replace"), url)
        main[i] = page.main_text
        for link in page.links:
            j = index.get(site.canonical(link.url.split("#")[0]) or "")
            if j is not None and j != i:
                inlinks[j].append((i, link.anchor, str(link.context)))
    return {"urls": urls, "inlinks": inlinks, "main": main}


def evidence(topic: Topic, pages: list[int], corpus: dict[str, Any]) -> dict[str, list[float]]:
    """Each piece of :data:`EVIDENCE` for each of ``pages``."""
    inlinks, main = corpus["inlinks"], corpus["main"]
    cosines: dict[int, float] = {}
    words: dict[str, tuple[float, float]] = {}

    def page_cosine(i: int) -> float:
        if i not in cosines:
            cosines[i] = topic.cosine(tokenize(main[i]))
        return cosines[i]

    def link_words(anchor: str, context: str) -> tuple[float, float]:
        """(a keyword in the anchor or context, the cosine of both): many links repeat."""
        key = f"{anchor}\x00{context}"
        if key not in words:
            words[key] = (float(topic.mentions(anchor) or topic.mentions(context)),
                          topic.cosine(tokenize(f"{anchor} {context}")))
        return words[key]

    out: dict[str, list[float]] = {name: [] for name in EVIDENCE}
    for i in pages:
        links = inlinks[i]
        best = max(links, key=lambda link: page_cosine(link[0]), default=None)
        said = [link_words(a, c) for _, a, c in links] or [(0.0, 0.0)]
        out["best parent"].append(page_cosine(best[0]) if best else 0.0)
        out["words, best parent's link"].append(link_words(best[1], best[2])[0] if best else 0.0)
        out["words, any in-link"].append(max(k for k, _ in said))
        out["anchor+context cosine"].append(max(c for _, c in said))
        out["in-links"].append(float(len({s for s, _, _ in links})))
        out["the page itself"].append(page_cosine(i))
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--topic-defs", type=Path, nargs="*", default=[],
                   help="topic definitions besides docweb's (e.g. bench/heldout.def.json)")
    p.add_argument("--task", default="examples", choices=list(TASK_SEEDS),
                   help="whose seeds are left out of the relevant pages")
    p.add_argument("--hosts", type=int, default=1, help="each topic's top hosts to rank")
    p.add_argument("--cache", type=Path, help="the parsed corpus, kept here between runs")
    p.add_argument("--out", type=Path, help="write every topic's figures here (JSON)")
    args = p.parse_args()
    if args.cache and args.cache.exists():
        corpus = pickle.loads(args.cache.read_bytes())
    else:
        corpus = parse_corpus()
        if args.cache:
            args.cache.write_bytes(pickle.dumps(corpus))
    hosts = [urlsplit(u).hostname for u in corpus["urls"]]
    results: dict[str, dict[str, float]] = {}
    for defs in [None, *args.topic_defs]:
        data = topics_from(defs, data_dir()) if defs else docweb_data()
        topics = json.loads((data / "topics.json").read_text("utf-8"))
        urls = topics["urls"]
        assert urls == corpus["urls"], "topics.json and the corpus list different pages"
        for n, t in enumerate(topics["topics"], 1):
            topic = Topic(t["keywords"])
            seeds = {s if isinstance(s, str) else s["url"]
                     for s in t["seeds"][TASK_SEEDS[args.task]]}
            score = {i: s for i, s in t["ranking"]}
            relevant_hosts = Counter(hosts[i] for i, s in t["ranking"]
                                     if s >= THRESHOLD and urls[i] not in seeds)
            for rank, (host, _) in enumerate(relevant_hosts.most_common(args.hosts), 1):
                pages = [i for i, h in enumerate(hosts)
                         if h == host and corpus["main"][i] and urls[i] not in seeds]
                y = np.array([score.get(i, 0.0) >= THRESHOLD for i in pages])
                if y.all() or not y.any():
                    continue
                auc = {k: round(float(roc_auc_score(y, v)), 3)
                       for k, v in evidence(topic, pages, corpus).items()}
                name = f"{defs.stem if defs else 'dev'} topic {n} host {rank}"
                results[name] = auc
                print(f"{name}: {len(pages)} pages, {int(y.sum())} relevant: "
                      + ", ".join(f"{k} {v:.2f}" for k, v in auc.items()), flush=True)
    print(f"\nmedian AUC over {len(results)} topic hosts (the pages of a topic's top host "
          "ranked by each piece of evidence; 0.5: chance)")
    for name in EVIDENCE:
        print(f"  {name:28s} {statistics.median(r[name] for r in results.values()):.2f}")
    if args.out:
        args.out.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
