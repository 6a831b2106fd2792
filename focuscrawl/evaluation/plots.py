"""PNG plots of a comparison, laid out as the papers' figures (matplotlib, Agg backend).

* ``pant_<task>.png`` -- Pant et al.'s Figures 2 and 3: static evaluation (left: % of the top-n
  pages crawled vs n) and dynamic evaluation (right: average rank of the pages crawled vs pages
  crawled), lexical ranking on top, linkage ranking below.
* ``recall_<task>.png`` -- Figure 4: average recall of the targets vs pages crawled.
* ``cho_<task>.png`` -- Cho et al.'s similarity figures: % of the hot pages crawled vs pages
  crawled, with the harvest rate (relevant and hot) beside it.

Every line is a strategy's mean across topics with a ±1 standard-error band; a line stops where
a topic's crawl ended early (harvest rate and mean rank are undefined after the last page).
Input is ``CompareResult.curves``: ``{task: {strategy: {curve: {"mean", "se", "n"}}}}``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

Curves = Mapping[str, Mapping[str, Mapping[str, Mapping[str, Any]]]]


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg", force=True)  # files only: never a display
    import matplotlib.pyplot as plt

    return plt


def _array(values: Any) -> np.ndarray:
    return np.asarray([np.nan if v is None else v for v in values], dtype=np.float64)


def _draw(ax: Any, strategies: Mapping[str, Mapping[str, Any]], curve: str) -> None:
    for i, (label, data) in enumerate(strategies.items()):
        if curve not in data:
            continue
        mean = _array(data[curve]["mean"])
        se = _array(data[curve]["se"])
        if data[curve].get("n"):
            # a mean over fewer topics than the rest is another population: stop the line
            n = np.asarray(data[curve]["n"])
            gone = n < n.max()
            mean[gone] = np.nan
            se[gone] = np.nan
        x = np.arange(1, len(mean) + 1)
        color = f"C{i % 10}"
        ax.plot(x, mean, label=label, color=color, linewidth=1.4)
        band = ~np.isnan(se) & ~np.isnan(mean)
        if band.any():
            ax.fill_between(x, np.where(band, mean - se, np.nan), np.where(band, mean + se, np.nan),
                            color=color, alpha=0.18, linewidth=0)
    ax.grid(True, alpha=0.3)


def _finish(fig: Any, path: Path, plt: Any) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_pant(task: str, strategies: Mapping[str, Mapping[str, Any]], path: Path) -> Path:
    """Figures 2/3: static (left) and dynamic (right), lexical (top) and linkage (bottom)."""
    plt = _pyplot()
    fig, axes = plt.subplots(2, 2, figsize=(11, 8.5))
    panels = [
        (axes[0, 0], "static_lexical", "a) Static lexical performance", "number of top pages",
         "% crawled"),
        (axes[0, 1], "mean_rank_lexical", "b) Dynamic lexical performance", "pages crawled",
         "average rank"),
        (axes[1, 0], "static_linkage", "c) Static linkage performance", "number of top pages",
         "% crawled"),
        (axes[1, 1], "mean_rank_linkage", "d) Dynamic linkage performance", "pages crawled",
         "average rank"),
    ]
    for ax, curve, title, xlabel, ylabel in panels:
        _draw(ax, strategies, curve)
        ax.set_title(title)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
    axes[0, 0].legend(fontsize=8)
    fig.suptitle(f"Pant et al. evaluation, task: {task} (mean ± 1 s.e. across topics)")
    return _finish(fig, path, plt)


def plot_recall(task: str, strategies: Mapping[str, Mapping[str, Any]], path: Path) -> Path:
    """Figure 4: average recall of the targets vs pages crawled."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.5, 4.8))
    _draw(ax, strategies, "recall")
    ax.set_xlabel("pages crawled")
    ax.set_ylabel("average recall")
    ax.set_title(f"Recall of targets, task: {task}")
    ax.legend(fontsize=8)
    return _finish(fig, path, plt)


def plot_cho(task: str, strategies: Mapping[str, Mapping[str, Any]], path: Path) -> Path:
    """Cho's similarity figures (% hot pages crawled) beside the harvest rates."""
    plt = _pyplot()
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.6))
    panels = [
        (axes[0], "hot_pct", "% hot pages crawled (Cho)", "% hot pages crawled"),
        (axes[1], "harvest", "Harvest rate: judge's relevance", "relevant / crawled"),
        (axes[2], "harvest_hot", "Harvest rate: Cho's hot pages", "hot / crawled"),
    ]
    for ax, curve, title, ylabel in panels:
        _draw(ax, strategies, curve)
        ax.set_title(title)
        ax.set_xlabel("pages crawled")
        ax.set_ylabel(ylabel)
    axes[0].legend(fontsize=8)
    fig.suptitle(f"task: {task} (mean ± 1 s.e. across topics)")
    return _finish(fig, path, plt)


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in text)


def plot_all(curves: Curves, out_dir: str | os.PathLike[str]) -> dict[str, Path]:
    """Every figure for every task; returns {name: path}, e.g. ``pant_examples``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    files: dict[str, Path] = {}
    for task, strategies in curves.items():
        t = _slug(task)
        files[f"pant_{t}"] = plot_pant(task, strategies, out / f"pant_{t}.png")
        files[f"recall_{t}"] = plot_recall(task, strategies, out / f"recall_{t}.png")
        files[f"cho_{t}"] = plot_cho(task, strategies, out / f"cho_{t}.png")
    return files
