"""Pure metric functions and their registry."""

from .base import Metric, MetricRegistry, MetricValues, NotApplicable, Sample
from .builtin import builtin_registry  # importing .builtin registers the built-in metrics

__all__ = ["Metric", "MetricRegistry", "MetricValues", "NotApplicable", "Sample", "builtin_registry"]
