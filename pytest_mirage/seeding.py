"""Seeded random generators derived from text keys.

A generator seeded from what it is about (a case id, a judged pair) gives the same draws whatever
else is in the run, on every machine and every xdist worker.
"""

from __future__ import annotations

import hashlib
import random


def seeded_rng(key: str) -> random.Random:
    """A ``random.Random`` seeded with the first 8 bytes (big-endian) of SHA-256 of ``key``."""
    return random.Random(int.from_bytes(hashlib.sha256(key.encode("utf-8")).digest()[:8], "big"))
