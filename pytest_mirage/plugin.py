"""pytest entry point (``pytest11: mirage``): hooks, collectors, items and stash keys only.

Importing this module must stay light: no torch/transformers/openai/vllm/sklearn.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from . import hookspecs, options
from .config import resolve
from .errors import ConfigError, MetricError, MirageError, ModelError, SuiteError
from .metrics.base import builtin_registry
from .models.registry import ModelRegistry, ModelSpec
from .runner import MirageSession
from .suites.loader import MANIFEST
from .suites.model import Case, Suite
from .suites.resolve import suite_ref

session_key = pytest.StashKey[MirageSession]()
RESULT_KEY = "mirage_result"
ENGINE_STATS_KEY = "mirage_engine_stats"


# ---------------------------------------------------------------------------- configuration
def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    pluginmanager.add_hookspecs(hookspecs)


def pytest_addoption(parser: pytest.Parser) -> None:
    options.add_options(parser)


def _entry_points(group: str) -> list[Any]:
    from importlib.metadata import entry_points

    return list(entry_points(group=group))


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "mirage: a pytest-mirage golden-suite case")
    config.addinivalue_line("markers", "mirage_lang(code): the language of a pytest-mirage case")
    try:
        cfg = resolve(config)
    except ConfigError as exc:
        raise pytest.UsageError(str(exc)) from None
    metrics = builtin_registry()
    models = ModelRegistry()
    for ep in _entry_points("pytest_mirage.models"):
        models.register(ep.name, ep.value)
    for ep in _entry_points("pytest_mirage.metrics"):
        obj = ep.load()
        obj(metrics) if callable(obj) and not hasattr(obj, "fn") else metrics.register(obj)
    config.hook.pytest_mirage_register_metrics(registry=metrics, config=config)
    config.hook.pytest_mirage_register_models(registry=models, config=config)
    # a progress bar for long model runs, on an interactive terminal only (not in CI logs, not workers)
    import sys

    progress = sys.stderr.isatty() and not hasattr(config, "workerinput")
    try:
        state = MirageSession(cfg, metrics, models, progress=progress)
    except ConfigError as exc:
        raise pytest.UsageError(str(exc)) from None
    try:
        state.validate_rules()
        state.open_offline_models()
    except MirageError as exc:
        raise pytest.UsageError(str(exc)) from None
    for lang in _all_lang_markers():
        config.addinivalue_line("markers", f"lang_{lang}: pytest-mirage cases in language {lang}")
    config.stash[session_key] = state
    config.pluginmanager.register(MirageController(config, state), "mirage-controller")


def _all_lang_markers() -> list[str]:
    from .langcodes import ISO639_1

    return sorted(ISO639_1)


def pytest_unconfigure(config: pytest.Config) -> None:
    state = config.stash.get(session_key, None)
    if state is not None:
        state.close()
        del config.stash[session_key]
    plugin = config.pluginmanager.get_plugin("mirage-controller")
    if plugin is not None:
        config.pluginmanager.unregister(plugin)


# ---------------------------------------------------------------------------- collection
class SuiteCollector(pytest.Collector):
    """Collects the items of one suite: one per (case, model)."""

    ref: str

    def _load(self) -> Suite:
        state = self.config.stash[session_key]
        suite = state.suite(self.ref)
        try:
            state.check_suite_rules(suite)
        except ConfigError as exc:
            raise SuiteError(str(exc)) from None
        state.register_suite_name(suite, self.ref)
        return suite

    def collect(self) -> Iterator[MirageItem]:
        state = self.config.stash[session_key]
        suite = self._load()
        for case in suite.cases:
            if not state.selected(case):
                continue
            for spec in state.cfg.models:
                name = f"{case.lang}/{case.id}[{spec.raw}]"
                item = MirageItem.from_parent(self, name=name, case=case, spec=spec, ref=self.ref)
                item.add_marker(pytest.mark.mirage)
                item.add_marker(getattr(pytest.mark, f"lang_{case.lang}"))
                item.add_marker(pytest.mark.mirage_lang(case.lang))
                item.keywords[case.lang] = True
                yield item

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException]) -> str:  # type: ignore[override]
        if isinstance(excinfo.value, (SuiteError, ConfigError)):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))


class SuiteFile(SuiteCollector, pytest.File):
    """A ``suite.toml`` found by pytest's normal collection (``pytest suites/``)."""

    def collect(self) -> Iterator[MirageItem]:
        self.ref = str(self.path.resolve())
        return super().collect()


class SourceSuite(SuiteCollector):
    """A suite given with ``--mirage-suite`` that is not a file (e.g. ``miracl:DIR?lang=hi``)."""


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if file_path.name == MANIFEST:
        return SuiteFile.from_parent(parent, path=file_path)
    return None


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    """Add the suites named by ``--mirage-suite`` (and by plugins) that the arguments did not cover."""
    state = config.stash[session_key]
    seen = {it.ref for it in items if isinstance(it, MirageItem)}
    seen |= {str(Path(str(x)).resolve()) for x in _collected_manifests(session)}
    extra: list[str] = list(state.cfg.suites)
    for provided in config.hook.pytest_mirage_suites(config=config):
        extra.extend(str(x) for x in provided or ())
    base = Path(str(config.invocation_params.dir))
    for value in extra:
        try:
            ref = suite_ref(value, base)
        except ConfigError as exc:
            raise pytest.UsageError(str(exc)) from None
        if ref in seen:
            continue
        seen.add(ref)
        if ref.endswith(MANIFEST) and Path(ref).is_relative_to(config.rootpath):
            col: SuiteCollector = SuiteFile.from_parent(session, path=Path(ref))
        else:
            col = SourceSuite.from_parent(session, name=f"mirage-suite:{value}")
            col.ref = ref
        items.extend(x for x in session.genitems(col) if isinstance(x, pytest.Item))


def _collected_manifests(session: pytest.Session) -> list[Path]:
    out = []
    for arg in session.config.args:
        p = Path(str(arg).split("::")[0])
        if p.name == MANIFEST:
            out.append(p)
        elif p.is_dir():
            out.extend(p.rglob(MANIFEST))
    return out


# ---------------------------------------------------------------------------- items
class MirageFailure(Exception):
    """A case missed one or more thresholds."""


class MirageItem(pytest.Item):
    def __init__(self, *, case: Case, spec: ModelSpec, ref: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.case = case
        self.spec = spec
        self.ref = ref
        self._result: Any = None

    def setup(self) -> None:
        state = self.config.stash[session_key]
        suite = state.suite(self.ref)
        # one engine call for every item of this model that this process will run (batched /
        # concurrent); under xdist, the items already queued for this worker
        todo = _xdist_queued(self) if hasattr(self.config, "workerinput") else self.session.items
        jobs = [(it.ref, state.suite(it.ref), it.case) for it in [self, *todo]
                if isinstance(it, MirageItem) and it.spec.raw == self.spec.raw]
        capman = self.config.pluginmanager.getplugin("capturemanager")
        if capman is not None and state.engine_settings.progress:
            with capman.global_and_fixture_disabled():  # the progress bar must reach the terminal
                state.prefetch(self.spec, jobs)
        else:
            state.prefetch(self.spec, jobs)
        try:
            self._result = state.result_for(self.spec, self.ref, suite, self.case)
        except (ModelError, MetricError, MirageError) as exc:
            err = {"suite": suite.name, "suite_ref": self.ref, "case_id": self.case.id, "lang": self.case.lang,
                   "model": state.model_name(self.spec),
                   "metrics": {}, "outcome": "error", "error": str(exc)}
            self.user_properties.append((RESULT_KEY, err))
            raise
        self.user_properties.append((RESULT_KEY, self._result.to_json()))

    def runtest(self) -> None:
        if self._result.failures:
            raise MirageFailure("\n".join(self._result.failures))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, MirageFailure):
            return f"{self.case.source}: case {self.case.id} ({self.case.lang}) with {self.spec.raw}:\n{excinfo.value}"
        if isinstance(excinfo.value, MirageError):
            msg = str(excinfo.value)
            who = "" if self.case.id in msg else f"case {self.case.id} with {self.spec.raw}: "
            return f"{self.case.source}: {who}{msg}"
        return str(super().repr_failure(excinfo))

    def _repr_failure_py(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        # setup errors (a model that failed, a metric that cannot run) read as one clear line
        if isinstance(excinfo.value, MirageError):
            return self.repr_failure(excinfo)
        return super()._repr_failure_py(excinfo, style=style)

    def reportinfo(self) -> tuple[Path | str, int | None, str]:
        return self.path, None, f"mirage {self.case.lang}/{self.case.id} [{self.spec.raw}]"


def _xdist_queued(item: pytest.Item) -> list[pytest.Item]:
    """Items queued for this xdist worker (best effort: xdist has no public API for it; on any
    change of its internals this returns [] and items are answered one by one, still correctly)."""
    items = item.session.items
    for plugin in item.config.pluginmanager.get_plugins():
        torun = getattr(plugin, "torun", None)
        if torun is None or not hasattr(torun, "lock") or not hasattr(plugin, "nextitem_index"):
            continue
        try:
            with torun.lock() as queue:
                idx = [i for i in queue if isinstance(i, int)]
        except Exception:
            return []
        nxt = plugin.nextitem_index
        if isinstance(nxt, int):
            idx.insert(0, nxt)
        return [items[i] for i in idx if 0 <= i < len(items)]
    return []


# ---------------------------------------------------------------------------- session plugin
class MirageController:
    """Per-run hooks that need the session state (registered in ``pytest_configure``)."""

    def __init__(self, config: pytest.Config, state: MirageSession) -> None:
        self.config = config
        self.state = state
        self.broken_suites: list[str] = []
        self.is_worker = hasattr(config, "workerinput")

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed and (report.nodeid.endswith(MANIFEST) or report.nodeid.lstrip(":").startswith("mirage-suite:")):
            self.broken_suites.append(report.nodeid)
            self.state.collection_errors.append({"nodeid": report.nodeid, "message": str(report.longrepr)})

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Any:
        # A broken suite is a collection error of that suite only: the other suites still run,
        # and the error count is restored afterwards so the run fails.
        ours = len(self.broken_suites)
        if ours and session.testsfailed == ours:
            session.testsfailed -= ours
            try:
                return (yield)
            finally:
                session.testsfailed += ours
        return (yield)

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        if self.state.cfg.suite_stats and not self.is_worker:
            self.state.note_collected([(it.ref, it.case) for it in session.items if isinstance(it, MirageItem)])

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if self.is_worker:
            return  # controller only: xdist re-fires worker reports here
        if report.when == "call" or (report.when == "setup" and report.failed):
            for key, value in report.user_properties:
                if key == RESULT_KEY:
                    self.state.add_result(report.nodeid, value if isinstance(value, dict) else json.loads(str(value)))

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        # xdist: merge each worker's engine counts (hits, misses, calls, tokens)
        data = getattr(node, "workeroutput", {}).get(ENGINE_STATS_KEY)
        if data:
            self.state.stats.merge(data)

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if self.is_worker:
            self.config.workeroutput[ENGINE_STATS_KEY] = self.state.stats.to_dict()  # type: ignore[attr-defined]
            return
        # controller only: workers must not write reports (xdist race)
        cfg = self.state.cfg
        if not self.state.results and cfg.report is None and cfg.markdown is None and cfg.html is None:
            return
        models = sorted({r.model for r in self.state.results.values() if r.outcome != "reference"})
        outcome = self.state.finish(models, exitstatus=int(session.exitstatus))
        if (outcome.failed_gates or outcome.fatal) and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        for line in self.state.engine_lines():
            terminalreporter.write_line(line)
        stats = self.state.stats_lines()
        if stats:
            terminalreporter.section("pytest-mirage suite statistics", sep="=")
            for line in stats:
                terminalreporter.write_line(line, yellow=line.lstrip().startswith("WARNING"))
        out = self.state.outcome
        if out is None:
            return
        from .report.terminal import gate_lines, leaderboard_lines

        if self.state.cfg.leaderboard and out.board:
            terminalreporter.section("pytest-mirage leaderboard", sep="=")
            width = terminalreporter._tw.fullwidth
            for line in leaderboard_lines(out.board, width=width, markup=terminalreporter.hasmarkup,
                                          extra=out.arena_columns()):
                terminalreporter.write_line(line)
        lines = gate_lines(out.gates)
        if lines:
            terminalreporter.section("pytest-mirage gates", sep="-")
            for line in lines:
                failed = line.startswith("FAILED")
                terminalreporter.write_line(line, red=failed, bold=failed)
        if out.arena.judge:
            j = out.arena.judge
            terminalreporter.write_line("mirage judge: " + ", ".join(f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}"
                                                                     for k, v in j.items()))
        for path in out.arena.saved:
            terminalreporter.write_line(f"mirage surrogate saved: {path}")
        for line in out.problems:
            terminalreporter.write_line(f"mirage: {line}", yellow=True)
        for line in out.fatal:
            terminalreporter.write_line(f"mirage ERROR: {line}", red=True, bold=True)
        if out.report_path:
            terminalreporter.write_line(f"mirage report: {out.report_path}")
        for path in out.extra_paths:
            terminalreporter.write_line(f"mirage report: {path}")
        if out.record_path:
            terminalreporter.write_line(f"mirage record: {out.record_path}")
