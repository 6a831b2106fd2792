"""Learned focus (no Scrapy): the topic profile that grows, link features, the link value model
and what the crawl knows about hosts and directories.
``focuscrawl.core.frontier.learned`` puts them together as the ``learned`` crawl order."""

from .areas import AreaStats
from .features import DENSE, FeatureStore, LinkFeaturizer, directory_of, url_tokens
from .model import LinkModel, sigmoid
from .profile import PageDigest, TopicProfile

__all__ = [
    "DENSE", "AreaStats", "FeatureStore", "LinkFeaturizer", "LinkModel", "PageDigest",
    "TopicProfile", "directory_of", "sigmoid", "url_tokens",
]
