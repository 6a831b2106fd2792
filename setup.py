"""For ``scrapyd-deploy``, which builds its egg with ``python setup.py bdist_egg``.

Everything else (the focuscrawl package and its data files) comes from pyproject.toml; the
installed library claims no top-level ``settings`` or ``spiders``.  The Scrapyd egg is the
project, so only ``bdist_egg`` adds the project's own ``settings`` and ``spiders`` packages
and the ``scrapy`` entry point naming the settings module (Scrapyd reads it).  Without this
file scrapyd-deploy would write its own setup.py that packs the tests and drops the data files.
"""

from setuptools import find_packages, setup
from setuptools.command.bdist_egg import bdist_egg

PROJECT_PACKAGES = ["settings", "settings.*", "spiders", "spiders.*"]
SCRAPY_ENTRY_POINT = "settings = settings"


class ProjectEgg(bdist_egg):
    """The egg of the Scrapy project: focuscrawl plus the project's settings and spiders."""

    def finalize_options(self) -> None:
        dist = self.distribution
        packages = list(dist.packages or [])
        packages += [p for p in find_packages(include=PROJECT_PACKAGES) if p not in packages]
        dist.packages = packages
        entry_points = dict(dist.entry_points or {})
        entry_points["scrapy"] = [SCRAPY_ENTRY_POINT]
        dist.entry_points = entry_points
        super().finalize_options()


setup(cmdclass={"bdist_egg": ProjectEgg})
