"""For ``scrapyd-deploy``, which builds its egg with ``python setup.py bdist_egg``.

Everything (packages focuscrawl, spiders and settings, the demo site's data, the ``scrapy``
entry point naming the settings module) comes from pyproject.toml; without this file
scrapyd-deploy would write its own setup.py that packs the tests and drops the data files.
"""

from setuptools import setup

setup()
