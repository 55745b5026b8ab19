"""pytest-mirage: a pytest plugin that gates multilingual RAG systems on golden suites.

The public API is imported lazily (``from pytest_mirage import Answer``): importing the package, as
pytest does for every run once the plugin is installed, loads nothing else.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._version import __version__

if TYPE_CHECKING:
    from .errors import ConfigError, MirageError, MirageWarning, ModelError, SuiteError
    from .metrics.base import Metric, MetricRegistry, NotApplicable, Sample
    from .models.base import Answer, ModelAdapter, ModelRequest
    from .results import CaseResult
    from .suites.model import Case, Passage, Suite

_EXPORTS: dict[str, str] = {
    "Answer": "models.base", "ModelAdapter": "models.base", "ModelRequest": "models.base",
    "Case": "suites.model", "Passage": "suites.model", "Suite": "suites.model",
    "CaseResult": "results",
    "ConfigError": "errors", "MirageError": "errors", "MirageWarning": "errors", "ModelError": "errors",
    "SuiteError": "errors",
    "Metric": "metrics.base", "MetricRegistry": "metrics.base", "NotApplicable": "metrics.base",
    "Sample": "metrics.base",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'pytest_mirage' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


__all__ = ["Answer", "Case", "CaseResult", "ConfigError", "Metric", "MetricRegistry", "MirageError", "MirageWarning",
           "ModelAdapter", "ModelError", "ModelRequest", "NotApplicable", "Passage", "Sample", "Suite",
           "SuiteError", "__version__"]
