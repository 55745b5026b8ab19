"""pytest-mirage: a pytest plugin that gates multilingual RAG systems on golden suites."""

from .errors import ConfigError, MirageError, MirageWarning, ModelError, SuiteError
from .metrics.base import Metric, MetricRegistry, NotApplicable, Sample
from .models.base import Answer, ModelAdapter, ModelRequest
from .suites.model import Case, Passage, Suite

__version__ = "0.1.0"

__all__ = [
    "Answer",
    "Case",
    "ConfigError",
    "Metric",
    "MetricRegistry",
    "MirageError",
    "MirageWarning",
    "ModelAdapter",
    "ModelError",
    "ModelRequest",
    "NotApplicable",
    "Passage",
    "Sample",
    "Suite",
    "SuiteError",
    "__version__",
]
