"""The metric and model registries a run starts from, without pytest."""

from __future__ import annotations

from ..metrics.base import MetricRegistry
from ..models.registry import ModelRegistry


def default_registries() -> tuple[MetricRegistry, ModelRegistry]:
    """The metric and model registries without pytest: the built-ins (with the judges' metrics) and
    the ``pytest_mirage.metrics`` / ``pytest_mirage.models`` entry points. A pytest run adds its
    ``pytest_mirage_register_*`` hooks on top."""
    from importlib.metadata import entry_points

    from ..metrics.base import builtin_registry
    from .judging import register_judge_metrics

    metrics = builtin_registry()
    register_judge_metrics(metrics)
    for ep in entry_points(group="pytest_mirage.metrics"):
        obj = ep.load()
        obj(metrics) if callable(obj) and not hasattr(obj, "fn") else metrics.register(obj)
    models = ModelRegistry()
    for ep in entry_points(group="pytest_mirage.models"):
        models.register(ep.name, ep.value)
    return metrics, models
