"""``SCHEDULER = "focuscrawl.scheduler.FocusScheduler"``: the public path, kept for users'
settings."""

from focuscrawl.seam.scheduler import FocusScheduler

__all__ = ["FocusScheduler"]
