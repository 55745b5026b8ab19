"""pytest entry point (``pytest11: mirage``): hook functions and fixtures only, each delegating to
:mod:`pytest_mirage.pytest` (collection, the session controller, fixtures' objects).

The plugin stays out of the way: importing it imports the option table and nothing heavy, and the
controller (settings, registries, model adapters) exists only when a run involves pytest-mirage — a
``--mirage-*`` option or ``mirage_*`` ini key is set, a ``suite.toml`` is collected, a mirage fixture is
used, or (on an xdist controller) a worker reports a mirage result.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from .config import options
from .pytest import hookspecs
from .pytest.collect import MANIFEST, SuiteFile, is_suite_nodeid

if TYPE_CHECKING:
    from .pytest.fixtures import MirageChecker, ModelUnderTest
    from .pytest.session import MirageController
    from .suites.model import Case


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    pluginmanager.add_hookspecs(hookspecs)


def pytest_addoption(parser: pytest.Parser) -> None:
    options.add_options(parser)


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "mirage(suite, lang=None): run this test once per case of a "
                            "pytest-mirage suite (with the mirage_case fixture)")
    config.addinivalue_line("markers", "mirage_lang(code): the language of a pytest-mirage case")
    if options.any_set(config):
        activate(config)


def activate(config: pytest.Config) -> MirageController:
    """The run's controller, created on first use (usage errors are pytest.UsageError)."""
    from .pytest.session import activate as _activate

    return _activate(config)


def pytest_unconfigure(config: pytest.Config) -> None:
    from .pytest.session import deactivate

    deactivate(config)


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if file_path.name == MANIFEST:
        activate(parent.config)
        return SuiteFile.from_parent(parent, path=file_path)
    return None


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_node_collection_finished(node: Any, ids: Sequence[str]) -> None:
    # an xdist controller collects nothing itself: it learns that suites are in use from its workers
    if any(is_suite_nodeid(i) for i in ids):
        activate(node.config)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """``mirage_case`` runs a test once per case of ``@pytest.mark.mirage(suite=..., lang=...)``;
    ``mirage_model`` once per configured model under test."""
    if "mirage_case" in metafunc.fixturenames or "mirage_model" in metafunc.fixturenames:
        from .pytest.fixtures import parametrize

        parametrize(metafunc, activate(metafunc.config))


@pytest.fixture
def mirage_case() -> Case:
    """One case of the suite named by ``@pytest.mark.mirage(suite=..., lang=...)`` (the test runs once
    per case: ``mirage_case.question``, ``.passages``, ``.relevant``, ``.answers``, ``.lang``)."""
    raise pytest.UsageError("mirage_case is parametrized by @pytest.mark.mirage(suite=...): add the marker")


@pytest.fixture
def mirage_model() -> ModelUnderTest:
    """A model under test (``--mirage-model``): ``mirage_model.answer(mirage_case)`` returns its
    :class:`~pytest_mirage.Answer` through the engine (cached, retried)."""
    raise pytest.UsageError("mirage_model is parametrized over --mirage-model; this should not happen")


@pytest.fixture
def mirage(request: pytest.FixtureRequest) -> MirageChecker:
    """Checks an answer against thresholds: ``mirage.check(answer, "citation_recall >= 0.5")``.

    The answer is the model's raw output (str), an :class:`~pytest_mirage.Answer` or a mapping like a
    ``py:`` pipeline returns; the case defaults to this test's ``mirage_case``. The metrics are
    computed as for a collected case, a missed threshold fails the test with a clean message, and
    the result joins the leaderboard, gates and reports.
    """
    from .pytest.fixtures import MirageChecker

    return MirageChecker(activate(request.config), request)


__all__ = ["activate", "mirage", "mirage_case", "mirage_model"]
