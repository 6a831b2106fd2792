"""What is kept of a crawl: a JOBDIR journal or nothing, behind one interface (``state``)."""
