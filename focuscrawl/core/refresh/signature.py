"""What counts as a page's change: its main content's signature, not its bytes.

The caller passes the page's main text (the extraction leaves navigation, headers, footers and
sidebars out, where sites keep menus, ads and visit counters).  Within it, what changes on every
request without the page changing is masked before hashing: clock times, dates, "N minutes ago",
and counts of views, visits, comments, likes or shares.  Other numbers are kept: a version
number changing in an advisory is a change that matters.
"""

from __future__ import annotations

import hashlib
import re

_MASKS = [
    re.compile(r"\b\d{1,2}:\d{2}(?::\d{2})?(?:\s*[ap]\.?m\.?)?", re.I),  # 14:05, 2:05:09 pm
    re.compile(r"\b\d{4}-\d{2}-\d{2}(?:[t ]\d{2}:\d{2}(?::\d{2})?(?:\.\d+)?z?)?", re.I),  # ISO
    re.compile(r"\b\d+\s+(?:second|minute|hour|day|week|month|year)s?\s+ago\b", re.I),
    re.compile(r"\b\d[\d,.]*\s*(?:views?|visits?|visitors?|comments?|likes?|shares?|reads?|"
               r"replies|reply)\b", re.I),
    re.compile(r"\b(?:views?|visits?|visitors?|comments?|likes?|shares?|reads?)\s*:\s*\d[\d,.]*",
               re.I),
]


def content_signature(main_text: str) -> str:
    """A short hash of ``main_text`` with whitespace and the volatile parts above normalised."""
    text = " ".join(main_text.split()).lower()
    for mask in _MASKS:
        text = mask.sub("#", text)
    return hashlib.blake2b(text.encode("utf-8"), digest_size=12).hexdigest()
