"""``python -m focuscrawl.report pages.jsonl``: the public command, kept (see
:mod:`focuscrawl.evaluation.report`)."""

from focuscrawl.evaluation.report import main

if __name__ == "__main__":
    raise SystemExit(main())
