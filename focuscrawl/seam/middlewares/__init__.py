"""Scrapy downloader and spider middlewares: politeness, robots.txt, traps, fetch rules."""
