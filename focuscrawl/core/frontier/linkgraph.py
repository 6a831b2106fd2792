"""The link graph discovered so far: edges, hot pages, distance from a hot page, hub weights.

Cho's modified crawler puts a URL in the hot queue when ``distance_from_hotpage(u) < 3`` *over
every link seen so far* — including links out of pages already crawled.  So the graph keeps every
edge it was told about, and when a page turns out hot (or a new edge shortens a path) the new,
shorter distances are propagated forward, at most ``limit`` links deep, and reported so that the
frontier can promote the URLs still queued.

Nodes are small integers; adjacency lists are ``array('l')`` to keep large crawls compact.
"""

from __future__ import annotations

from array import array
from collections import deque

import numpy as np

INFINITY = 1 << 30


class LinkGraph:
    def __init__(self, distance_limit: int = 3) -> None:
        self.limit = distance_limit
        self._ids: dict[str, int] = {}
        self._urls: list[str] = []
        self._out: list[array | None] = []
        self._indegree: list[int] = []
        self._edges: set[int] = set()
        self._hot: set[int] = set()
        self._dist: dict[int, int] = {}  # only nodes closer than ``limit`` to a hot page

    # -- nodes ---------------------------------------------------------------------------
    def node(self, url: str) -> int:
        i = self._ids.get(url)
        if i is None:
            i = self._ids[url] = len(self._urls)
            self._urls.append(url)
            self._out.append(None)
            self._indegree.append(0)
        return i

    def url(self, node: int) -> str:
        return self._urls[node]

    def __len__(self) -> int:
        return len(self._urls)

    @property
    def edge_count(self) -> int:
        return len(self._edges)

    def backlinks(self, url: str) -> int:
        i = self._ids.get(url)
        return 0 if i is None else self._indegree[i]

    def is_hot(self, url: str) -> bool:
        i = self._ids.get(url)
        return i is not None and i in self._hot

    def distance(self, url: str) -> int:
        """Cho's distance_from_hotpage: 0 for a hot page, k if a hot page is k links away.

        Returns ``INFINITY`` when no hot page is within ``limit - 1`` links.
        """
        i = self._ids.get(url)
        return INFINITY if i is None else self._dist.get(i, INFINITY)

    # -- updates: each returns the URLs whose distance dropped -----------------------------
    def add_edge(self, src: str, dst: str) -> list[str]:
        s, d = self.node(src), self.node(dst)
        if s == d:
            return []
        key = (s << 32) | d
        if key in self._edges:
            return []
        self._edges.add(key)
        out = self._out[s]
        if out is None:
            out = self._out[s] = array("l")
        out.append(d)
        self._indegree[d] += 1
        ds = self._dist.get(s)
        if ds is not None and ds + 1 < self._dist.get(d, self.limit):
            return self._propagate(d, ds + 1)
        return []

    def set_hot(self, url: str) -> list[str]:
        i = self.node(url)
        if i in self._hot:
            return []
        self._hot.add(i)
        return self._propagate(i, 0)

    def _propagate(self, start: int, dist: int) -> list[str]:
        """Breadth-first relaxation from ``start``; bounded by ``limit`` so it stays cheap."""
        changed: list[str] = []
        if dist >= self.limit or self._dist.get(start, INFINITY) <= dist:
            return changed
        self._dist[start] = dist
        changed.append(self._urls[start])
        todo = deque([start])
        while todo:
            v = todo.popleft()
            nd = self._dist[v] + 1
            if nd >= self.limit:
                continue
            for w in self._out[v] or ():
                if self._dist.get(w, INFINITY) > nd:
                    self._dist[w] = nd
                    changed.append(self._urls[w])
                    todo.append(w)
        return changed

    # -- link analysis ---------------------------------------------------------------------
    def parents(self, url: str) -> list[str]:
        """Pages linking to ``url`` (a scan: used rarely, by the distiller's rescoring)."""
        return [self._urls[s] for s in self._parents_of(self._ids.get(url, -1))]

    def _parents_of(self, node: int) -> list[int]:
        if node < 0:
            return []
        return [k >> 32 for k in self._edges if (k & 0xFFFFFFFF) == node]

    def hubs(self, nodes: list[str] | None = None, iterations: int = 20) -> dict[str, float]:
        """HITS hub weights over the graph's edges (Kleinberg), normalised to max 1.

        The distiller of the focused-crawler slides ranks links by the hub weight of the pages
        that point to them; recomputed every K pages, so numpy's sparse-free power iteration
        over the edge list is enough.
        """
        if not self._edges:
            return {}
        # sorted: a set's iteration order depends on its history, and the float sums must
        # not, or a graph restored from a snapshot would rank links (slightly) differently
        keys = np.sort(np.fromiter(self._edges, dtype=np.int64, count=len(self._edges)))
        src = keys >> 32
        dst = keys & 0xFFFFFFFF
        n = len(self._urls)
        hub = np.ones(n)
        for _ in range(iterations):
            # bincount with weights sums floats (numpy's stubs say ints): astype copies nothing
            auth = np.bincount(dst, weights=hub[src], minlength=n).astype(np.float64, copy=False)
            auth /= np.linalg.norm(auth) or 1.0
            hub = np.bincount(src, weights=auth[dst], minlength=n).astype(np.float64, copy=False)
            hub /= np.linalg.norm(hub) or 1.0
        top = hub.max() or 1.0
        has_out = np.zeros(n, dtype=bool)
        has_out[src] = True
        return {self._urls[i]: float(hub[i] / top) for i in np.flatnonzero(has_out)}

    # -- persistence -----------------------------------------------------------------------
    def snapshot(self) -> dict:
        return {
            "limit": self.limit,
            "urls": self._urls,
            # each page's links in the order they were seen: a restored graph then walks
            # them (distance propagation, promotions) in the same order as the original
            "edges": [(s << 32) | d for s, out in enumerate(self._out) if out for d in out],
            "hot": sorted(self._hot),
        }

    @classmethod
    def restore(cls, state: dict) -> LinkGraph:
        g = cls(state["limit"])
        for u in state["urls"]:
            g.node(u)
        for k in state["edges"]:
            g.add_edge(g._urls[k >> 32], g._urls[k & 0xFFFFFFFF])
        for i in state["hot"]:
            g.set_hot(g._urls[i])
        return g
