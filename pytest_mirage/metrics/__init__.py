"""Pure metric functions and their registry."""

from .base import Metric, MetricRegistry, MetricValues, NotApplicable, Sample
from .builtin import builtin_registry

__all__ = ["Metric", "MetricRegistry", "MetricValues", "NotApplicable", "Sample", "builtin_registry"]
