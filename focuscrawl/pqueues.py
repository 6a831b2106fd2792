"""``SCHEDULER_PRIORITY_QUEUE = "focuscrawl.pqueues.FocusPriorityQueue"``: the public path, kept for
users' settings."""

from focuscrawl.seam.pqueues import FocusPriorityQueue

__all__ = ["FocusPriorityQueue"]
