"""Suites built from real public formats (MIRACL, MIRAGE-Bench export). See issue #3."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import SuiteError
from .model import Suite


def load_source_spec(spec: str) -> Suite:
    raise SuiteError(f"{spec}: source loaders are not available yet")


def load_source_suite(source: Any, manifest: Path, data: dict[str, Any], problems: Any) -> Suite:
    raise SuiteError("[source] suites are not available yet", str(manifest))
