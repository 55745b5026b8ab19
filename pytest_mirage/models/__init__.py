"""Model adapters behind one protocol, resolved from ``kind:arg`` specs through a lazy registry."""

from .base import Answer, ModelAdapter, ModelRequest
from .registry import ModelRegistry, ModelSpec, parse_model_spec

__all__ = ["Answer", "ModelAdapter", "ModelRegistry", "ModelRequest", "ModelSpec", "parse_model_spec"]
