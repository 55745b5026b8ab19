"""Suite manifest schema, loaders and the Case/Passage/Suite value types.

``load_suite`` is imported on first use, so that modules needing only the value types
(``from pytest_mirage.suites.model import Case``) do not load the loaders.
"""

from __future__ import annotations

from typing import Any

from .model import Case, ManifestRule, Passage, Suite

__all__ = ["Case", "ManifestRule", "Passage", "Suite", "load_suite"]


def __getattr__(name: str) -> Any:
    if name == "load_suite":
        from .loader import load_suite

        return load_suite
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
