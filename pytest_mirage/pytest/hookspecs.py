"""Hooks that a ``conftest.py`` or a plugin package implements to extend pytest-mirage.

Example (``conftest.py``)::

    from pytest_mirage import Metric

    def pytest_mirage_register_metrics(registry):
        registry.register(Metric("answer_length", lambda s: float(len(s.answer.answer or ""))))
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:
    from ..metrics.base import MetricRegistry
    from ..models.registry import ModelRegistry

hookspec = pluggy.HookspecMarker("pytest")


@hookspec
def pytest_mirage_register_metrics(registry: MetricRegistry, config: Any) -> None:
    """Register metrics: ``registry.register(Metric(...))`` or ``@registry.add("name")``."""


@hookspec
def pytest_mirage_register_models(registry: ModelRegistry, config: Any) -> None:
    """Register model kinds: ``registry.register("kind", factory_or_"module:attr")``.

    A factory receives a :class:`~pytest_mirage.models.registry.ModelSpec` and returns an object
    following the :class:`~pytest_mirage.models.base.ModelAdapter` protocol.
    """


@hookspec
def pytest_mirage_suites(config: Any) -> list[Any] | None:
    """Provide suites: return suite folder paths (str/Path) or ``name=path`` style specs."""
