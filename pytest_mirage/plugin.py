"""pytest entry point (``pytest11: mirage``): hooks, collectors, items, fixtures and stash keys only.

The plugin stays out of the way: importing it imports the option table and nothing heavy, and the
controller (settings, registries, model adapters) exists only when a run involves pytest-mirage — a
``--mirage-*`` option or ``mirage_*`` ini key is set, a ``suite.toml`` is collected, a mirage fixture is
used, or (on an xdist controller) a worker reports a mirage result.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import pytest

from . import hookspecs, options

if TYPE_CHECKING:
    from .models.base import Answer
    from .models.registry import ModelSpec
    from .results import CaseResult
    from .run.answering import Answerer, Job
    from .run.context import RunContext
    from .run.finish import Finished
    from .suites.model import Case

MANIFEST = "suite.toml"
RESULT_ATTR = "mirage_results"  # on TestReport: the results of an item, JSON (travels with xdist reports)
ENGINE_STATS_KEY = "mirage_engine_stats"
JUDGE_HEALTH_KEY = "mirage_judge_health"
SOURCE_PREFIX = "mirage-suite:"
controller_key = pytest.StashKey["MirageController"]()


# ---------------------------------------------------------------------------- configuration
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
    ctl = config.stash.get(controller_key, None)
    if ctl is None:
        ctl = MirageController(config)
        config.stash[controller_key] = ctl
        config.pluginmanager.register(ctl, "mirage-controller")
    return ctl


def _active(config: pytest.Config) -> MirageController | None:
    return config.stash.get(controller_key, None)


def pytest_unconfigure(config: pytest.Config) -> None:
    ctl = config.stash.get(controller_key, None)
    if ctl is not None:
        ctl.judging.close()
        ctl.ctx.close()
        del config.stash[controller_key]
        config.pluginmanager.unregister(ctl)


# Module-level hooks that only notice pytest-mirage being used; everything else lives on the controller.
def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if file_path.name == MANIFEST:
        return SuiteFile.from_parent(parent, path=file_path)
    return None


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_node_collection_finished(node: Any, ids: Sequence[str]) -> None:
    # an xdist controller collects nothing itself: it learns that suites are in use from its workers
    if any(_is_suite_nodeid(i) for i in ids):
        activate(node.config)


def _is_suite_nodeid(nodeid: str) -> bool:
    return nodeid.split("::")[0].endswith(MANIFEST) or nodeid.lstrip(":").startswith(SOURCE_PREFIX)


# ---------------------------------------------------------------------------- collection
class SuiteCollector(pytest.Collector):
    """Collects the items of one suite: one per (case, model)."""

    ref: str

    def collect(self) -> Iterator[MirageItem]:
        from .errors import MirageError, SuiteError
        from .report.sanitize import neutralise_commands

        ctl = activate(self.config)
        try:
            suite = ctl.ctx.suite(self.ref)
            ctl.ctx.register_suite(suite, self.ref)
            ctl.judging.for_suite(suite)  # a bad [judges] table is this suite's load error
        except MirageError as exc:
            raise SuiteError(str(exc)) from None
        cases = ctl.ctx.run_cases(suite)
        ctl.add_lang_markers({c.lang for c in cases})
        repeats = ctl.ctx.settings.repeat
        for case in cases:
            for spec in ctl.ctx.settings.models:
                for repeat in range(repeats):
                    # pytest prints node ids: a model name must not carry a workflow command (##[...])
                    name = f"{case.lang}/{case.id}[{neutralise_commands(ctl.ctx.model_name(spec))}]" \
                        + (f"#{repeat}" if repeats > 1 else "")
                    item = MirageItem.from_parent(self, name=name, case=case, spec=spec, ref=self.ref, repeat=repeat)
                    item.add_marker(pytest.mark.mirage)
                    item.add_marker(getattr(pytest.mark, f"lang_{case.lang}"))
                    item.add_marker(pytest.mark.mirage_lang(case.lang))
                    item.keywords[case.lang] = True
                    yield item

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException]) -> str:  # type: ignore[override]
        from .errors import MirageError

        if isinstance(excinfo.value, MirageError):
            from .report.sanitize import terminal_safe

            return terminal_safe(str(excinfo.value))  # a load error quotes suite text: no workflow command
        return str(super().repr_failure(excinfo))


class SuiteFile(SuiteCollector, pytest.File):
    """A ``suite.toml`` found by pytest's normal collection (``pytest suites/``)."""

    def collect(self) -> Iterator[MirageItem]:
        self.ref = str(self.path.resolve())
        return super().collect()


class SourceSuite(SuiteCollector):
    """A suite given with ``--mirage-suite`` that is not a file (e.g. ``miracl:DIR?lang=hi``)."""


# ---------------------------------------------------------------------------- items
results_key = pytest.StashKey[list["CaseResult"]]()


def record_result(item: pytest.Item, result: CaseResult) -> None:
    """Keep ``result`` for the item's report; its readable ``--junitxml`` properties are added to the
    item's teardown report (see :func:`junit_properties`)."""
    item.stash.setdefault(results_key, []).append(result)


def junit_properties(results: Sequence[CaseResult]) -> list[tuple[str, object]]:
    """The model, every metric value, the thresholds missed and the error, as ``mirage.*`` properties.

    They go on the teardown report only: JUnit XML reads a test case's properties from that report,
    and pytest copies ``item.user_properties`` into all three reports of an item (setup, call,
    teardown), which xdist then serializes three times."""
    props: list[tuple[str, object]] = []
    for result in results:
        props.append(("mirage.case", f"{result.suite}/{result.case_id} ({result.lang})"))
        props.append(("mirage.model", result.model))
        props += [(f"mirage.metric.{k}", "null" if v is None else f"{v:.6g}") for k, v in sorted(result.metrics.items())]
        props += [(f"mirage.check.{k}", "passed" if ok else "failed") for k, ok in sorted(result.checks.items())]
        props += [("mirage.failure", f) for f in result.failures]
        if result.error:
            props.append(("mirage.error", result.error))
    return props


class MirageFailure(Exception):
    """A case missed one or more thresholds."""


class MirageItem(pytest.Item):
    def __init__(self, *, case: Case, spec: ModelSpec, ref: str, repeat: int = 0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.case = case
        self.spec = spec
        self.ref = ref
        self.repeat = repeat
        self._result: CaseResult | None = None

    def setup(self) -> None:
        from .errors import MirageError
        from .results import CaseResult

        ctl = activate(self.config)
        try:
            with ctl.progress_to_terminal():
                self._result = ctl.answerer.result(self.spec, self.ref, self.case, lambda: ctl.jobs(self),
                                                   self.repeat)
        except MirageError as exc:
            suite = ctl.ctx.suite(self.ref)
            err = CaseResult.errored(suite=suite.name, suite_ref=self.ref, case_id=self.case.id, lang=self.case.lang,
                                     model=ctl.ctx.model_name(self.spec), error=str(exc), repeat=self.repeat)
            record_result(self, err)
            raise
        record_result(self, self._result)

    def runtest(self) -> None:
        if self._result is not None and self._result.failures:
            raise MirageFailure("\n".join(self._result.failures))

    def describe(self, exc: BaseException) -> str:
        """One clear block for a missed threshold or a model/metric error (no plugin frames); escape
        sequences from model output or error bodies are shown, never executed by the terminal."""
        from .report.sanitize import terminal_safe

        msg = str(exc)
        if isinstance(exc, MirageFailure):
            text = f"{self.case.source}: case {self.case.id} ({self.case.lang}) with {self.spec.display_name}:\n{msg}"
        else:
            who = "" if self.case.id in msg else f"case {self.case.id} with {self.spec.display_name}: "
            text = f"{self.case.source}: {who}{msg}"
        return terminal_safe(text)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        from .errors import MirageError

        if isinstance(excinfo.value, MirageFailure | MirageError):
            return self.describe(excinfo.value)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path | str, int | None, str]:
        from .report.sanitize import neutralise_commands

        return self.path, None, neutralise_commands(f"mirage {self.case.lang}/{self.case.id} [{self.spec.display_name}]")


# ---------------------------------------------------------------------------- fixtures for teams
def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """``mirage_case`` runs a test once per case of ``@pytest.mark.mirage(suite=..., lang=...)``;
    ``mirage_model`` once per configured model under test."""
    names = metafunc.fixturenames
    if "mirage_case" not in names and "mirage_model" not in names:
        return
    ctl = activate(metafunc.config)
    if "mirage_case" in names:
        marker = metafunc.definition.get_closest_marker("mirage")
        if marker is None or not (marker.kwargs.get("suite") or marker.args):
            raise pytest.UsageError(f"{metafunc.definition.nodeid}: the mirage_case fixture needs "
                                    "@pytest.mark.mirage(suite=NAME_OR_PATH[, lang='hi'])")
        pairs = ctl.marker_cases(marker.kwargs.get("suite") or marker.args[0], marker.kwargs.get("lang"),
                                 Path(str(metafunc.definition.path)).parent)
        metafunc.parametrize("mirage_case", [c for _, c in pairs], ids=[f"{c.lang}/{c.id}" for _, c in pairs])
    if "mirage_model" in names:
        specs = ctl.ctx.settings.models
        metafunc.parametrize("mirage_model", [ModelUnderTest(ctl, s) for s in specs], ids=[ctl.ctx.model_name(s) for s in specs])


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
    return MirageChecker(activate(request.config), request)


class ModelUnderTest:
    """A configured model under test, for tests that want its answers (see the ``mirage_model`` fixture)."""

    def __init__(self, ctl: MirageController, spec: ModelSpec) -> None:
        self._ctl = ctl
        self.spec = spec

    @property
    def name(self) -> str:
        return self._ctl.ctx.model_name(self.spec)

    def answer(self, case: Case) -> Answer:
        """The model's answer to ``case`` (raises ModelError when it has none)."""
        from .engine import run_requests
        from .errors import ModelError
        from .run.requests import build_request

        ctx = self._ctl.ctx
        adapter = ctx.adapter(self.spec)
        ref = self._ctl.ref_of(case)
        (ans,) = run_requests(adapter, [build_request(ctx.suite(ref), case, adapter.retrieves)], ctx.engine)
        if isinstance(ans, BaseException):
            raise ans if isinstance(ans, ModelError) else ModelError(str(ans))
        return ans.with_model(self.name)

    def __repr__(self) -> str:
        return f"ModelUnderTest({self.spec.safe_raw!r})"


class MirageChecker:
    """The ``mirage`` fixture's object (see its docstring)."""

    def __init__(self, ctl: MirageController, request: pytest.FixtureRequest) -> None:
        self._ctl = ctl
        self._request = request

    def check(self, answer: Any, *rules: str, case: Case | None = None, model: str | None = None) -> CaseResult:
        """Score ``answer`` for ``case`` and check ``rules`` (plus the suite's thresholds)."""
        from .errors import MirageError

        node = self._request.node
        params = getattr(node, "callspec", None)
        params = params.params if params is not None else {}
        case = case or params.get("mirage_case")
        if case is None:
            pytest.fail("mirage.check needs a case: use the mirage_case fixture (with @pytest.mark.mirage(suite=...)) "
                        "or pass case=", pytrace=False)
        if model is None:
            mut = params.get("mirage_model")
            model = mut.name if isinstance(mut, ModelUnderTest) else node.originalname
        try:
            result = self._ctl.check(answer, case, rules, model=model, where=node.nodeid)
        except MirageError as exc:
            pytest.fail(f"{case.source}: case {case.id}: {exc}", pytrace=False)
        record_result(node, result)
        if result.failures:
            pytest.fail(f"{case.source}: case {case.id} ({case.lang}) with {model}:\n" + "\n".join(result.failures),
                        pytrace=False)
        return result


# ---------------------------------------------------------------------------- the controller
class MirageController:
    """Per-run hooks of an active pytest-mirage run (registered by :func:`activate`)."""

    def __init__(self, config: pytest.Config) -> None:
        from .errors import ConfigError, MirageError
        from .run.answering import Answerer
        from .run.context import RunContext
        from .settings import resolve

        self.config = config
        self.is_worker = hasattr(config, "workerinput")
        try:
            settings = resolve(config)
            stale: list[str] = []
            if not self.is_worker:  # a run that stops early must not leave an earlier run's report behind
                from .report.write import remove_stale

                stale = remove_stale([settings.report, settings.markdown, settings.html])
            # progress of model and judge calls: a bar on a terminal, plain lines in CI logs; workers'
            # stderr is not shown, so only the controller (or a serial run) reports progress
            self.ctx: RunContext = RunContext(settings, self._metrics(config), self._models(config),
                                              progress=not self.is_worker)
            self.ctx.validate()
        except (ConfigError, MirageError) as exc:
            raise pytest.UsageError(str(exc)) from None
        from .run.judging import Judging

        self.judging = Judging(self.ctx)
        try:
            self.judging.validate()
        except (ConfigError, MirageError) as exc:
            raise pytest.UsageError(str(exc)) from None
        self.answerer: Answerer = Answerer(self.ctx, self.judging)
        self.judge_health: dict[str, dict[str, Any]] = {}  # merged from xdist workers
        self.results: dict[tuple[str, str, str, int], CaseResult] = {}
        self.collection_errors: dict[str, str] = {}
        self.finished: Finished | None = None
        self._annotations: list[str] = []  # GitHub workflow commands, printed at the very end
        self.notes: list[str] = stale  # problems found along the way, printed at the end
        self.errors: list[str] = []  # what made the run fail outside the report (printed in red)
        self._jobs: dict[str, list[Job]] = {}
        self._langs: set[str] = set()
        self._collected: list[tuple[str, Case]] = []
        self.baseline: tuple[Path, Any] | None = None
        if not self.is_worker:
            s = self.ctx.settings
            if s.baseline is not None:
                from .run.baseline import load_baseline

                try:
                    self.baseline = (s.baseline, load_baseline(s.baseline))
                except MirageError as exc:
                    raise pytest.UsageError(str(exc)) from None

    @staticmethod
    def _metrics(config: pytest.Config) -> Any:
        from importlib.metadata import entry_points

        from .metrics.base import builtin_registry
        from .run.judging import register_judge_metrics

        metrics = builtin_registry()
        register_judge_metrics(metrics)
        for ep in entry_points(group="pytest_mirage.metrics"):
            obj = ep.load()
            obj(metrics) if callable(obj) and not hasattr(obj, "fn") else metrics.register(obj)
        config.hook.pytest_mirage_register_metrics(registry=metrics, config=config)
        return metrics

    @staticmethod
    def _models(config: pytest.Config) -> Any:
        from importlib.metadata import entry_points

        from .models.registry import ModelRegistry

        models = ModelRegistry()
        for ep in entry_points(group="pytest_mirage.models"):
            models.register(ep.name, ep.value)
        config.hook.pytest_mirage_register_models(registry=models, config=config)
        return models

    # ---------------------------------------------------------------- collection
    def add_lang_markers(self, langs: set[str]) -> None:
        for lang in sorted(langs - self._langs):
            self.config.addinivalue_line("markers", f"lang_{lang}: pytest-mirage cases in language {lang}")
        self._langs |= langs

    def pytest_collection_modifyitems(self, session: pytest.Session, config: pytest.Config,
                                      items: list[pytest.Item]) -> None:
        """Add the suites named by ``--mirage-suite`` (and by plugins) that the arguments did not cover."""
        from .errors import ConfigError
        from .suites.resolve import suite_ref

        seen = {it.ref for it in items if isinstance(it, MirageItem)}
        seen |= {str(p.resolve()) for p in _collected_manifests(session)}
        extra: list[str] = list(self.ctx.settings.suites)
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
                col = SourceSuite.from_parent(session, name=f"{SOURCE_PREFIX}{value}")
                col.ref = ref
            items.extend(x for x in session.genitems(col) if isinstance(x, pytest.Item))

    def add_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed and _is_suite_nodeid(report.nodeid):
            self.collection_errors[report.nodeid] = str(report.longrepr)

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        self.add_collectreport(report)

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        mine = [it for it in session.items if isinstance(it, MirageItem)]
        if self.ctx.settings.suite_stats and not self.is_worker:
            self._collected = [(it.ref, it.case) for it in mine]
        if self.ctx.settings.langs is not None and not self.is_worker:
            self._note_empty_filter(mine)
        # A broken suite is a collection error of that suite only: the other suites still run, and
        # the run fails. Only when every collection error is a suite's (others keep pytest's rule).
        if self.collection_errors and session.testsfailed == len(self.collection_errors):
            self.config.option.continue_on_collection_errors = True

    def _note_empty_filter(self, items: Sequence[MirageItem]) -> None:
        langs = self.ctx.settings.langs or frozenset()
        found = {it.case.lang for it in items}
        missing = sorted(langs - found)
        if missing:
            self.notes.append(f"{self.ctx.settings.source('lang')}: no collected suite has cases in "
                                       f"{', '.join(missing)}")

    # ---------------------------------------------------------------- running
    def jobs(self, item: MirageItem) -> list[Job]:
        """This process's jobs of ``item``'s model: all its items (planned once per model), or under
        xdist the items queued for this worker."""
        if self.is_worker:
            from .compat import xdist_queued_items

            queued = xdist_queued_items(self.config, item.session.items)
            return [(it.ref, it.case, it.repeat) for it in queued
                    if isinstance(it, MirageItem) and it.spec.raw == item.spec.raw]
        jobs = self._jobs.get(item.spec.raw)
        if jobs is None:
            jobs = self._jobs[item.spec.raw] = [(it.ref, it.case, it.repeat) for it in item.session.items
                                                if isinstance(it, MirageItem) and it.spec.raw == item.spec.raw]
        return jobs

    def progress_to_terminal(self) -> Any:
        """While answering, the progress bar must reach the terminal (outside output capture)."""
        import contextlib

        capman = self.config.pluginmanager.getplugin("capturemanager")
        if capman is not None and self.ctx.engine.progress:
            return capman.global_and_fixture_disabled()
        return contextlib.nullcontext()

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
        rep = yield
        # a model that failed or a metric that cannot run: one clear block, no plugin frames
        from .errors import MirageError

        if isinstance(item, MirageItem) and call.excinfo is not None and call.when == "setup" \
                and isinstance(call.excinfo.value, MirageError):
            rep.longrepr = item.describe(call.excinfo.value)
        # the item's results travel on its report (serialized by xdist with the report's attributes)
        results = item.stash.get(results_key, None)
        if results and (call.when == "call" or (call.when == "setup" and rep.failed)):
            setattr(rep, RESULT_ATTR, [r.to_json() for r in results])
        if results and call.when == "teardown":
            rep.user_properties.extend(junit_properties(results))
        return rep

    def add_report(self, report: pytest.TestReport) -> None:
        from .results import CaseResult

        for value in getattr(report, RESULT_ATTR, None) or ():
            res = CaseResult.from_json(value if isinstance(value, dict) else json.loads(str(value)))
            self.results[res.key] = res

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if not self.is_worker:  # controller only: xdist re-fires worker reports here
            self.add_report(report)

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        # xdist: merge each worker's engine counts (hits, misses, calls, tokens)
        output = getattr(node, "workeroutput", {})
        data = output.get(ENGINE_STATS_KEY)
        if data:
            self.ctx.stats.merge(data)
        for name, health in (output.get(JUDGE_HEALTH_KEY) or {}).items():
            self._merge_judge_health(name, health)

    def _merge_judge_health(self, name: str, health: dict[str, Any]) -> None:
        from .judges.base import JudgeHealth

        total = JudgeHealth.from_json(self.judge_health.get(name, {}))
        total.merge(JudgeHealth.from_json(health))
        self.judge_health[name] = total.to_json()

    # ---------------------------------------------------------------- fixtures
    def marker_cases(self, suite: str, lang: str | None, base: Path) -> list[tuple[str, Case]]:
        from .errors import MirageError
        from .suites.resolve import suite_ref

        try:
            ref = suite_ref(str(suite), base)
            s = self.ctx.suite(ref)
            self.ctx.register_suite(s, ref)
        except MirageError as exc:
            raise pytest.UsageError(f"@pytest.mark.mirage(suite={suite!r}): {exc}") from None
        langs = {x.strip() for x in lang.split(",")} if lang else None
        cases = [(ref, c) for c in self.ctx.run_cases(s) if langs is None or c.lang in langs]
        if not cases:
            raise pytest.UsageError(f"@pytest.mark.mirage(suite={suite!r}, lang={lang!r}): no case of suite "
                                    f"{s.name!r} matches (its languages: {', '.join(sorted({c.lang for c in s.cases}))})")
        return cases

    def ref_of(self, case: Case) -> str:
        ref = self.ctx.ref_of_suite(case.suite)
        if ref is None:
            raise pytest.UsageError(f"case {case.id!r} belongs to suite {case.suite!r}, which this run has not "
                                    "loaded (use the mirage_case fixture with @pytest.mark.mirage(suite=...))")
        return ref

    def check(self, answer: Any, case: Case, rules: Sequence[str], *, model: str, where: str) -> CaseResult:
        from .run.checks import check_answer

        ref = self.ref_of(case)
        return check_answer(self.ctx, self.judging, ref, case, answer, rules, model=model, where=where)

    # ---------------------------------------------------------------- session end
    @pytest.hookimpl(tryfirst=True)  # before junitxml writes its file: gates are test results there too
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if self.is_worker:
            self.config.workeroutput[ENGINE_STATS_KEY] = self.ctx.stats.to_dict()  # type: ignore[attr-defined]
            self.config.workeroutput[JUDGE_HEALTH_KEY] = self.judging.health_json()  # type: ignore[attr-defined]
            return
        from .errors import MirageError
        from .report.model import CollectionError
        from .run.finish import finish_run

        s = self.ctx.settings
        if not self.results and not s.writes_reports and not self.collection_errors:
            return
        errors = [CollectionError(k, v) for k, v in self.collection_errors.items()]
        try:
            self.finished = finish_run(self.ctx, self.results.values(), collection_errors=errors,
                                       exitstatus=int(session.exitstatus),
                                       problems=[*self.ctx.stats.problems, *self.notes], baseline=self.baseline,
                                       judging=self.judging, judge_health=self.judge_health)
        except MirageError as exc:  # e.g. a model map naming no model of this run: one clear line
            self.errors.append(f"the session end failed: {exc}")
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
            return
        rep = self.finished.report
        self._report_gates(gate_reports(rep, self.config.rootpath))
        if self.ctx.settings.github:
            self._github(rep)
        if (rep.failed_gates or rep.fatal or rep.failed_regressions or self.finished.write_problems) \
                and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def _github(self, rep: Any) -> None:
        """In GitHub Actions: the Markdown summary appended to the job summary, and annotations at the
        golden-file line of failed cases and the suite.toml line of failed gates."""
        import os

        from .report.github import annotation_lines, step_summary

        summary = os.environ.get("GITHUB_STEP_SUMMARY")
        if summary:
            try:
                with open(summary, "a", encoding="utf-8") as fh:
                    fh.write(step_summary(rep))
            except OSError as exc:
                self.errors.append(f"cannot append the job summary to $GITHUB_STEP_SUMMARY {summary}: "
                                   f"{exc.strerror or exc}")
        if os.environ.get("GITHUB_ACTIONS") == "true":
            self._annotations = annotation_lines(rep, workspace=os.environ.get("GITHUB_WORKSPACE"))

    def _report_gates(self, reports: Sequence[pytest.TestReport]) -> None:
        """Gates as test results for every consumer (JUnit XML, the session's failure count, the
        summary line): the terminal reporter takes them in its statistics, not in its progress
        line (which ended with the last collected item)."""
        terminal = self.config.pluginmanager.get_plugin("terminalreporter")
        others = self.config.pluginmanager.subset_hook_caller(
            "pytest_runtest_logreport", remove_plugins=[terminal] if terminal is not None else [])
        for rep in reports:
            others(report=rep)
            # JUnit XML records a test case's properties (and closes it) with its teardown report
            others(report=pytest.TestReport(nodeid=rep.nodeid, location=rep.location, keywords=dict(rep.keywords),
                                            outcome="passed", longrepr=None, when="teardown",
                                            user_properties=rep.user_properties))
            if terminal is not None:
                category = self.config.hook.pytest_report_teststatus(report=rep, config=self.config)[0]
                terminal.stats.setdefault(category, []).append(rep)

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        from .report.sanitize import neutralise_commands, terminal_safe
        from .report.terminal import (
            gate_lines,
            judge_line,
            leaderboard_lines,
            leaderboard_width,
            problem_lines,
        )

        def write(line: str, **markup: bool) -> None:  # every summary line may quote a model, server or suite
            terminalreporter.write_line(neutralise_commands(line), **markup)

        ctx = self.ctx
        if ctx.called_cacheable_model or ctx.stats.problems:
            from .engine import cache_file, summary_lines

            path = cache_file(ctx.engine)
            for line in summary_lines(ctx.stats, str(path) if path else None):
                write(line)
        if self._collected:
            from .run.suite_stats import run_stats_lines

            lines = run_stats_lines(ctx, self._collected, list(self.results.values()))
            if lines:
                terminalreporter.section("pytest-mirage suite statistics", sep="=")
                for line in lines:
                    write(line, yellow=line.lstrip().startswith("WARNING"))
        done = self.finished
        if done is None:
            for line in self.notes:
                write(terminal_safe(f"mirage: {line}"), yellow=True)
            for line in self.errors:
                write(terminal_safe(f"mirage ERROR: {line}"), red=True, bold=True)
            return
        rep = done.report
        if ctx.settings.leaderboard and rep.leaderboard:
            terminalreporter.section("pytest-mirage leaderboard", sep="=")
            width = leaderboard_width(self.config.get_terminal_writer().fullwidth, isatty=terminalreporter.isatty)
            for line in leaderboard_lines(rep, width=width, markup=terminalreporter.hasmarkup):
                write(line)
        lines = gate_lines(rep.gates)
        if lines:
            terminalreporter.section("pytest-mirage gates", sep="-")
            for line in lines:
                failed = line.startswith("FAILED")
                write(line, red=failed, bold=failed)
        from .report.stats_lines import statistics_sections

        for title, section in statistics_sections(rep):
            terminalreporter.section(title, sep="-")
            for line in section:
                bad = line.startswith("FAILED")
                write(line, red=bad, bold=bad)
        if rep.judge:
            write(judge_line(rep.judge))
        for path in done.saved_surrogates:
            write(f"mirage surrogate saved: {path}")
        for line, err in problem_lines(rep, [*done.write_problems, *self.errors]):
            write(line, red=err, bold=err, yellow=not err)
        for path in done.written:
            write(f"mirage report: {path}")
        if done.record_path:
            write(f"mirage record: {done.record_path}")
        for line in self._annotations:  # workflow commands: at the start of a line, as they are
            terminalreporter.write(line + "\n")


def _location(source: str, rootpath: Path) -> tuple[str, int | None]:
    """(path relative to the rootdir, 0-based line) of a rule source such as ``/x/suite.toml:12``."""
    path, _, line = source.rpartition(":")
    if path and line.isdigit() and path.endswith(MANIFEST):
        p = Path(path)
        rel = p.relative_to(rootpath) if p.is_absolute() and p.is_relative_to(rootpath) else p
        return str(rel), int(line) - 1
    return "mirage-gates", None


def gate_reports(report: Any, rootpath: Path) -> list[pytest.TestReport]:
    """Every gate and regression gate as a test result of its own (``mirage-gate::...``), so JUnit
    consumers and pytest's summary line count them: passed, failed, or skipped when an optional
    gate could not be evaluated."""
    from .report.sanitize import neutralise_commands
    from .stats.gates import regression_outcome_text

    out = []
    gates = [(f"{g.suite}::{g.lang}::{g.model}::{g.expr}", g.source, g.passed, g.describe(), "gate")
             for g in report.gates]
    gates += [(f"{g['suite']}::{g['lang']}::{g['model']}::{g['expr']}", g.get("source") or "",
               None if g.get("failed") is None else not g["failed"],
               f"{g['suite']} [{g['lang']}] {g['model']}: {g['expr']}: " + regression_outcome_text(g), "regression gate")
              for g in report.statistics.get("regressions", ())]
    gates = [(neutralise_commands(ident), source, passed, neutralise_commands(text), kind)
             for ident, source, passed, text, kind in gates]
    for ident, source, passed, text, kind in gates:
        path, line = _location(source, rootpath)
        outcome: Literal["passed", "failed", "skipped"] = \
            "passed" if passed else ("skipped" if passed is None else "failed")
        longrepr: Any = None
        if outcome == "failed":
            longrepr = f"{kind} {text}"
        elif outcome == "skipped":
            longrepr = (path, (line or 0) + 1, f"not evaluable {kind}: {text}")
        out.append(pytest.TestReport(nodeid=f"mirage-gate::{ident}", location=(path, line, f"{kind} {ident}"),
                                     keywords={"mirage_gate": 1}, outcome=outcome, longrepr=longrepr, when="call",
                                     user_properties=[("mirage.gate", text)]))
    return out


def _collected_manifests(session: pytest.Session) -> list[Path]:
    out = []
    for arg in session.config.args:
        p = Path(str(arg).split("::")[0])
        if p.name == MANIFEST:
            out.append(p)
        elif p.is_dir():
            out.extend(p.rglob(MANIFEST))
    return out


__all__ = ["MirageChecker", "MirageController", "MirageItem", "ModelUnderTest", "activate", "mirage",
           "mirage_case", "mirage_model"]
