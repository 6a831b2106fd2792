"""``ADDONS = {"focuscrawl.addon.FocusCrawl": 0}``: the public path, kept for users' settings."""

from focuscrawl.seam.addon import FocusCrawl

__all__ = ["FocusCrawl"]
