"""The crawl's output: feeds, items, pipelines, WARC recording, a full disk."""
