"""Suite manifest schema, loaders and the Case/Passage/Suite value types."""

from .loader import load_suite
from .model import Case, Passage, Suite

__all__ = ["Case", "Passage", "Suite", "load_suite"]
