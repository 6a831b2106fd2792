"""``scrapy crawl`` of focuscrawl's project: Scrapy's own, with a usage line that names the spider,
and focuscrawl's feed formats known on the command line (``-O pages.parquet``: Scrapy checks
the format against ``FEED_EXPORTERS`` before it loads any add-on).

The exit status needs nothing from here any more: a crawl that could not start or stopped short
(bad arguments, a JOBDIR of another crawl, Redis unreachable, a missing part, a full disk) makes
Scrapy's own ``crawl`` command exit 1 in any project (``focuscrawl.seam.outcome``).  Selected by
``COMMANDS_MODULE = "focuscrawl.seam.commands"`` in the settings (Scrapyd runs the same command).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy.commands.crawl import Command as ScrapyCrawl
from scrapy.exceptions import UsageError

from focuscrawl import config
from focuscrawl.seam.addon import merge_dict_setting

if TYPE_CHECKING:
    import argparse


class Command(ScrapyCrawl):
    def short_desc(self) -> str:
        return "Run a spider of the current project, by name (exit 1 if it could not start)"

    def process_options(self, args: list[str], opts: argparse.Namespace) -> None:
        assert self.settings is not None
        # the add-on sets the same again (explicit entries win both times)
        merge_dict_setting(self.settings, "FEED_EXPORTERS", config.default("FEED_EXPORTERS"))
        super().process_options(args, opts)

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        if len(args) != 1:
            raise UsageError("give one spider, e.g. scrapy crawl topic -a keywords=...")
        super().run(args, opts)
