"""The controller of an active pytest-mirage run: its per-run hooks (a plugin object registered by
:func:`activate`, like pytest's own ``LogXML``), each delegating to the run's pure parts.

Per item it answers through :class:`~pytest_mirage.evaluate.answering.Answerer` (all the items of a
model in one engine call); per report it keeps the results that travel in the :mod:`.wire` format;
at the session end it calls :func:`pytest_mirage.finish.finish` with what it stored, and reports
the outcome as gate test reports, GitHub output and the exit status.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from . import wire
from .collect import (
    MirageItem,
    controller_key,
    extra_suite_items,
    is_suite_nodeid,
    recorded_results,
)

if TYPE_CHECKING:
    from ..evaluate.answering import Answerer, Job
    from ..evaluate.context import RunContext
    from ..finish.junit import JunitCase
    from ..finish.report import Finished
    from ..results import CaseResult
    from ..suites.model import Case


def activate(config: pytest.Config) -> MirageController:
    """The run's controller, created on first use (usage errors are pytest.UsageError)."""
    ctl = config.stash.get(controller_key, None)
    if ctl is None:
        ctl = MirageController(config)
        config.stash[controller_key] = ctl
        config.pluginmanager.register(ctl, "mirage-controller")
    assert isinstance(ctl, MirageController)
    return ctl


def deactivate(config: pytest.Config) -> None:
    ctl = config.stash.get(controller_key, None)
    if isinstance(ctl, MirageController):
        ctl.judging.close()
        ctl.ctx.close()
        del config.stash[controller_key]
        config.pluginmanager.unregister(ctl)


def _registries(config: pytest.Config) -> tuple[Any, Any]:
    """The metric and model registries: built-ins, entry points, then the registration hooks."""
    from ..evaluate.registries import default_registries

    metrics, models = default_registries()
    config.hook.pytest_mirage_register_metrics(registry=metrics, config=config)
    config.hook.pytest_mirage_register_models(registry=models, config=config)
    return metrics, models


class MirageController:
    """Per-run hooks of an active pytest-mirage run (registered by :func:`activate`)."""

    def __init__(self, config: pytest.Config) -> None:
        from ..config.settings import resolve
        from ..errors import ConfigError, MirageError
        from ..evaluate.answering import Answerer
        from ..evaluate.context import RunContext
        from ..evaluate.judging import Judging

        self.config = config
        self.is_worker = hasattr(config, "workerinput")
        try:
            settings = resolve(config)
            stale: list[str] = []
            if not self.is_worker:  # a run that stops early must not leave an earlier run's report behind
                from ..report.write import remove_stale

                stale = remove_stale([settings.report, settings.markdown, settings.html])
            # progress of model and judge calls: a bar on a terminal, plain lines in CI logs; workers'
            # stderr is not shown, so only the controller (or a serial run) reports progress
            metrics, models = _registries(config)
            self.ctx: RunContext = RunContext(settings, metrics, models, progress=not self.is_worker)
            self.ctx.validate()
            self.judging = Judging(self.ctx)
            self.judging.validate()
        except (ConfigError, MirageError) as exc:
            raise pytest.UsageError(str(exc)) from None
        self.answerer: Answerer = Answerer(self.ctx, self.judging)
        self.judge_health: dict[str, dict[str, Any]] = {}  # merged from xdist workers
        self.results: dict[tuple[str, str, str, int], CaseResult] = {}
        self.junit_cases: dict[str, JunitCase] = {}  # --mirage-shard: what the merge's JUnit file needs
        self.collection_errors: dict[str, str] = {}
        self.finished: Finished | None = None
        self._annotations: list[str] = []  # GitHub workflow commands, printed at the very end
        self.notes: list[str] = stale  # problems found along the way, printed at the end
        self.errors: list[str] = []  # what made the run fail outside the report (printed in red)
        self._jobs: dict[str, list[Job]] = {}
        self._langs: set[str] = set()
        self._collected: list[tuple[str, Case]] = []
        self._worker_suites: dict[str, None] = {}  # refs of the suites xdist workers collected
        self.baseline: tuple[Path, Any] | None = None
        if not self.is_worker and self.ctx.settings.baseline is not None:
            from ..finish.baseline import load_baseline

            try:
                self.baseline = (self.ctx.settings.baseline, load_baseline(self.ctx.settings.baseline))
            except MirageError as exc:
                raise pytest.UsageError(str(exc)) from None

    # ---------------------------------------------------------------- collection
    def add_lang_markers(self, langs: set[str]) -> None:
        for lang in sorted(langs - self._langs):
            self.config.addinivalue_line("markers", f"lang_{lang}: pytest-mirage cases in language {lang}")
        self._langs |= langs

    def pytest_collection_modifyitems(self, session: pytest.Session, config: pytest.Config,
                                      items: list[pytest.Item]) -> None:
        """Add the suites named by ``--mirage-suite`` (and by plugins) that the arguments did not cover."""
        extra: list[str] = list(self.ctx.settings.suites)
        for provided in config.hook.pytest_mirage_suites(config=config):
            extra.extend(str(x) for x in provided or ())
        items.extend(extra_suite_items(session, config, items, extra))

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed and is_suite_nodeid(report.nodeid):
            self.collection_errors[report.nodeid] = str(report.longrepr)

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        mine = [it for it in session.items if isinstance(it, MirageItem)]
        if self.ctx.settings.suite_stats and not self.is_worker:
            self._collected = [(it.ref, it.case) for it in mine]
        if self.ctx.settings.langs is not None and not self.is_worker:
            # a shard's items are a share of the selected cases: the languages are those of all of them
            have = {c.lang for _ref, suite in self.ctx.registered_suites() for c in self.ctx.run_cases(suite)} \
                if self.ctx.settings.shard is not None else {it.case.lang for it in mine}
            missing = sorted(self.ctx.settings.langs - have)
            if missing:
                self.notes.append(f"{self.ctx.settings.source('lang')}: no collected suite has cases in "
                                  f"{', '.join(missing)}")
        # A broken suite is a collection error of that suite only: the other suites still run, and
        # the run fails. Only when every collection error is a suite's (others keep pytest's rule).
        if self.collection_errors and session.testsfailed == len(self.collection_errors):
            from .compat import continue_after_collection_errors

            continue_after_collection_errors(self.config)

    # ---------------------------------------------------------------- running
    def answer(self, item: MirageItem) -> CaseResult:
        """``item``'s result; the first item of a model answers this process's items of that model."""
        import contextlib

        from .compat import capture_disabled

        # the progress bar must reach the terminal (outside output capture)
        with capture_disabled(self.config) if self.ctx.engine.progress else contextlib.nullcontext():
            return self.answerer.result(item.spec, item.ref, item.case, lambda: self._jobs_of(item), item.repeat)

    def _jobs_of(self, item: MirageItem) -> list[Job]:
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

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
        rep = yield
        from ..errors import MirageError
        from .junit import junit_properties

        # a model that failed or a metric that cannot run: one clear block, no plugin frames
        if isinstance(item, MirageItem) and call.excinfo is not None and call.when == "setup" \
                and isinstance(call.excinfo.value, MirageError):
            rep.longrepr = item.describe(call.excinfo.value)
        results = recorded_results(item)
        if results and (call.when == "call" or (call.when == "setup" and rep.failed)):
            wire.attach_results(rep, results)
        if results and call.when == "teardown":
            rep.user_properties.extend(junit_properties(results))
        return rep

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if self.is_worker:  # controller only: xdist re-fires worker reports here
            return
        results = wire.results_of(report)
        for res in results:
            self.results[res.key] = res
        if self.ctx.settings.shard is not None and is_suite_nodeid(report.nodeid):
            from ..finish.junit import JunitCase

            text = "" if report.longrepr is None else str(report.longrepr)
            if report.skipped and isinstance(report.longrepr, tuple) and len(report.longrepr) == 3:
                text = str(report.longrepr[2]).removeprefix("Skipped: ")
            case = self.junit_cases.get(report.nodeid) or JunitCase(report.nodeid, ())
            self.junit_cases[report.nodeid] = case.with_report(report.when, report.outcome, text,
                                                               float(report.duration), [r.key for r in results])

    @pytest.hookimpl(optionalhook=True, trylast=True)  # after a plugin that reruns the item
    def pytest_handlecrashitem(self, crashitem: str, report: pytest.TestReport, sched: Any) -> None:
        """xdist: a worker died while running a case. The case is an errored result with the crash
        reason in every report (its worker never sent one), never a case that silently vanished."""
        if str(report.outcome) == "rerun" or not is_suite_nodeid(crashitem):
            return  # another plugin reruns it, or not a mirage item
        result = crashed_result(self.ctx, self.config, crashitem, str(report.longrepr))
        if result is not None and result.key not in self.results:
            self.results[result.key] = result

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        # xdist: merge each worker's engine counts (hits, misses, calls, tokens) and judge health
        from ..finish.report import merge_health

        engine_stats, health = wire.read_worker_output(node)
        if engine_stats:
            self.ctx.stats.merge(engine_stats)
        self.judge_health = merge_health(self.judge_health, health)
        self._worker_suites.update(dict.fromkeys(wire.read_worker_suites(node)))

    # ---------------------------------------------------------------- session end
    @pytest.hookimpl(tryfirst=True)  # before junitxml writes its file: gates are test results there too
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        # the judges' input and batch counts depend on how xdist split the items: engine figures, not
        # report ones
        self.ctx.stats.add_judge_work(self.judging.health_json())
        if self.is_worker:
            wire.write_worker_output(self.config, self.ctx.stats.to_dict(), self.judging.health_json())
            if self.ctx.settings.shard is not None:
                wire.write_worker_suites(self.config, [ref for ref, _suite in self.ctx.registered_suites()])
            return
        from ..errors import MirageError
        from ..finish import FinishInput, finish
        from ..report.model import CollectionError
        from .junit import gate_reports, publish_gate_reports

        s = self.ctx.settings
        if s.shard is not None:
            self._finish_shard(session)
            return
        if not self.results and not s.writes_reports and not self.collection_errors:
            return
        given = FinishInput(results=tuple(self.results.values()),
                            collection_errors=tuple(CollectionError(k, v) for k, v in self.collection_errors.items()),
                            exitstatus=int(session.exitstatus), problems=(*self.ctx.stats.problems, *self.notes),
                            baseline=self.baseline, judge_health=self.judge_health)
        try:
            self.finished = finish(self.ctx, given, judging=self.judging)
        except MirageError as exc:  # e.g. a model map naming no model of this run: one clear line
            self.errors.append(f"the session end failed: {exc}")
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
            return
        rep = self.finished.report
        publish_gate_reports(self.config, gate_reports(rep, self.config.rootpath))
        if s.github:
            from ..report.github import github_outputs

            self._annotations, problems = github_outputs(rep)
            self.errors.extend(problems)
        if (rep.failed_gates or rep.fatal or rep.failed_regressions or self.finished.write_problems) \
                and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def _finish_shard(self, session: pytest.Session) -> None:
        """``--mirage-shard K/N``: write the partial report (no session-level gate is evaluated here;
        the case thresholds have failed their items already)."""
        from ..config.options import RawOptions
        from ..config.settings import settings_hash
        from ..finish.partial import Partial, SuiteStamp, suite_content_hash
        from ..finish.report import merge_health
        from ..report.model import CollectionError
        from ..report.write import write_atomic

        s = self.ctx.settings
        assert s.shard is not None and s.report is not None  # resolve() requires --mirage-report with a shard
        k, n = s.shard
        if session.exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED and not self.collection_errors:
            session.exitstatus = pytest.ExitCode.OK  # a shard may hold no case of a small run: not an error
        raw = RawOptions.of_config(self.config)
        # every suite collected here or by a worker (even with no case in this shard), and of every result
        refs = dict.fromkeys([*(ref for ref, _suite in self.ctx.registered_suites()), *self._worker_suites,
                              *(r.suite_ref for r in self.results.values())])
        judgments, judge = self._shard_judgments(list(refs))
        partial = Partial(
            shard=(k, n), settings_hash=settings_hash(raw), options=raw,
            suites=tuple(SuiteStamp(suite.name, ref, suite_content_hash(suite))
                         for ref, suite in sorted(((ref, self.ctx.suite(ref)) for ref in refs),
                                                  key=lambda x: x[1].name)),
            results=tuple(self.results.values()),
            collection_errors=tuple(CollectionError(key, v) for key, v in self.collection_errors.items()),
            problems=(*self.ctx.stats.problems, *self.notes),
            judge_health=merge_health(self.judge_health, self.judging.health_json()),
            engine_stats=self.ctx.stats.to_dict(), exitstatus=int(session.exitstatus),
            junit=tuple(self.junit_cases.values()), arena_judgments=tuple(judgments), arena_judge=judge,
            rootdir=str(self.config.rootpath))
        try:
            write_atomic(s.report, partial.to_bytes())
        except OSError as exc:
            self.errors.append(f"cannot write the partial report {s.report}: {exc.strerror or exc}")
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
            return
        skipped = [f"{s.source(name)} {path}" for name, path in (("markdown", s.markdown), ("html", s.html),
                                                                 ("record", s.record)) if path is not None]
        self.notes.append(f"shard {k}/{n}: {len(self.results)} case result(s) written to the partial report "
                          f"{s.report}; session-level gates, arena, baseline comparison and reports are not "
                          "evaluated in a shard: run 'python -m pytest_mirage merge' over the partials of all "
                          f"{n} shards" + (f" ({', '.join(skipped)}: written by the merge)" if skipped else ""))

    def _shard_judgments(self, refs: list[str]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """``--mirage-judge`` in a shard: judge the arena matchups of this shard's cases (every model
        of a case is in its shard), so that the merge only fits. With ``--mirage-repeat`` (a case's
        repeats may be in other shards) or when judging fails here, the merge judges them."""
        from ..errors import MirageError
        from ..finish.arena import shard_judgments
        from ..finish.references import reference_results

        s = self.ctx.settings
        if s.judge is None or s.battles is not None or s.repeat > 1 or not self.results:
            return [], {}
        res = sorted(self.results.values(), key=lambda r: (r.suite, r.lang, r.case_id, r.model))
        try:
            references = reference_results(self.ctx, res).results  # their answers only: scored by the merge
            selected = [c for ref in refs for c in self.ctx.run_cases(self.ctx.suite(ref))]  # the run's, all shards
            return shard_judgments(self.ctx, res, references, selected)
        except MirageError as exc:
            self.notes.append(f"shard arena judging failed ({exc}): the merge judges these matchups")
            return [], {}

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        from .terminal import SummaryInput, write_summary

        write_summary(terminalreporter, self.config.get_terminal_writer().fullwidth,
                      SummaryInput(self.ctx, self.finished, self._collected, list(self.results.values()),
                                   self.notes, self.errors, self._annotations))


def crashed_result(ctx: RunContext, config: pytest.Config, nodeid: str, reason: str) -> CaseResult | None:
    """The errored result of the item ``nodeid`` (``path/suite.toml::lang/case[model]#repeat`` or
    ``mirage-suite:SPEC::...``) whose process crashed; None when the node id is not an item's."""
    import re

    from ..errors import MirageError
    from ..results import CaseResult
    from ..suites.resolve import suite_ref
    from .collect import MANIFEST, SOURCE_PREFIX

    where, _, name = nodeid.rpartition("::")
    m = re.fullmatch(r"(?P<lang>[^/]+)/(?P<case>.+)\[(?P<model>.*)\](?:#(?P<repeat>\d+))?", name)
    if not where or m is None:
        return None
    try:
        if where.startswith(SOURCE_PREFIX):
            ref = suite_ref(where[len(SOURCE_PREFIX):], Path(str(config.invocation_params.dir)))
        elif where.endswith(MANIFEST):
            ref = str((config.rootpath / where).resolve())
        else:
            return None
        suite_name = ctx.suite(ref).name
    except MirageError:
        ref, suite_name = where, where  # the suite no longer loads: the row still says what crashed
    return CaseResult.errored(suite=suite_name, suite_ref=ref, case_id=m["case"], lang=m["lang"], model=m["model"],
                              error=f"{reason}: the process answering this case died (out of memory, a crash in a "
                                    "native library, os._exit in a model); its answer and metrics are lost",
                              repeat=int(m["repeat"] or 0))
