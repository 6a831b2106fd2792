"""The live dashboard of a crawl: ``/`` (the page), ``/status.json``, ``/metrics``.

    EXTENSIONS = {"focuscrawl.seam.watch.dashboard.Dashboard": 0}
    -s FOCUS_DASHBOARD=127.0.0.1:8050

See ``docs/watching.md``.
"""

from focuscrawl.seam.watch.dashboard.extension import Dashboard, parse_address

__all__ = ["Dashboard", "parse_address"]
