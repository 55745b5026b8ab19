"""Suites as pytest collectors and cases as items: one item per case x model (x repeat), named
``lang/case[model]``, with ``mirage``, ``lang_<code>`` and ``mirage_lang`` markers.

The items reach the run through a :class:`Host` (the session's controller, found in
``config.stash``): they ask it for their result and never plan other items' work themselves.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import pytest

if TYPE_CHECKING:
    from ..evaluate.context import RunContext
    from ..evaluate.judging import Judging
    from ..models.registry import ModelSpec
    from ..results import CaseResult
    from ..suites.model import Case

MANIFEST = "suite.toml"
SOURCE_PREFIX = "mirage-suite:"


class Host(Protocol):
    """What collectors and items need from the session's controller."""

    ctx: RunContext
    judging: Judging

    def add_lang_markers(self, langs: set[str]) -> None: ...

    def answer(self, item: MirageItem) -> CaseResult: ...


controller_key = pytest.StashKey[Host]()
results_key = pytest.StashKey[list["CaseResult"]]()


def host(config: pytest.Config) -> Host:
    """The active run's controller (collection activates it before any suite is collected)."""
    return config.stash[controller_key]


def is_suite_nodeid(nodeid: str) -> bool:
    return nodeid.split("::")[0].endswith(MANIFEST) or nodeid.lstrip(":").startswith(SOURCE_PREFIX)


def record_result(item: pytest.Item, result: CaseResult) -> None:
    """Keep ``result`` for the item's reports (see :mod:`.wire` and :mod:`.junit`)."""
    item.stash.setdefault(results_key, []).append(result)


def recorded_results(item: pytest.Item) -> list[CaseResult]:
    return item.stash.get(results_key, [])


class SuiteCollector(pytest.Collector):
    """Collects the items of one suite: one per (case, model)."""

    ref: str

    def collect(self) -> Iterator[MirageItem]:
        from ..errors import MirageError, SuiteError
        from ..report.sanitize import neutralise_commands

        ctl = host(self.config)
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
                    if not ctl.ctx.in_shard(suite, case, repeat):  # --mirage-shard K/N: another shard's
                        continue
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
        from ..errors import MirageError

        if isinstance(excinfo.value, MirageError):
            from ..report.sanitize import terminal_safe

            return terminal_safe(str(excinfo.value))  # a load error quotes suite text: no workflow command
        return str(super().repr_failure(excinfo))


class SuiteFile(SuiteCollector, pytest.File):
    """A ``suite.toml`` found by pytest's normal collection (``pytest suites/``)."""

    def collect(self) -> Iterator[MirageItem]:
        self.ref = str(self.path.resolve())
        return super().collect()


class SourceSuite(SuiteCollector):
    """A suite given with ``--mirage-suite`` that is not a file (e.g. ``miracl:DIR?lang=hi``)."""


class MirageFailure(Exception):
    """A case missed one or more thresholds."""


class MirageItem(pytest.Item):
    """One case answered by one model under test (one repeat of it with ``--mirage-repeat``)."""

    def __init__(self, *, case: Case, spec: ModelSpec, ref: str, repeat: int = 0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.case = case
        self.spec = spec
        self.ref = ref
        self.repeat = repeat
        self._result: CaseResult | None = None

    def setup(self) -> None:
        from ..errors import MirageError
        from ..results import CaseResult

        ctl = host(self.config)
        try:
            self._result = ctl.answer(self)
        except MirageError as exc:
            suite = ctl.ctx.suite(self.ref)
            record_result(self, CaseResult.errored(suite=suite.name, suite_ref=self.ref, case_id=self.case.id,
                                                   lang=self.case.lang, model=ctl.ctx.model_name(self.spec),
                                                   error=str(exc), repeat=self.repeat))
            raise
        record_result(self, self._result)

    def runtest(self) -> None:
        if self._result is not None and self._result.failures:
            raise MirageFailure("\n".join(self._result.failures))

    def describe(self, exc: BaseException) -> str:
        """One clear block for a missed threshold or a model/metric error (no plugin frames); escape
        sequences from model output or error bodies are shown, never executed by the terminal."""
        from ..report.sanitize import terminal_safe

        msg = str(exc)
        if isinstance(exc, MirageFailure):
            text = f"{self.case.source}: case {self.case.id} ({self.case.lang}) with {self.spec.display_name}:\n{msg}"
        else:
            who = "" if self.case.id in msg else f"case {self.case.id} with {self.spec.display_name}: "
            text = f"{self.case.source}: {who}{msg}"
        return terminal_safe(text)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        from ..errors import MirageError

        if isinstance(excinfo.value, MirageFailure | MirageError):
            return self.describe(excinfo.value)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path | str, int | None, str]:
        from ..report.sanitize import neutralise_commands

        return self.path, None, neutralise_commands(f"mirage {self.case.lang}/{self.case.id} [{self.spec.display_name}]")


def collected_manifests(session: pytest.Session) -> list[Path]:
    """The ``suite.toml`` files the command-line arguments name or contain."""
    out = []
    for arg in session.config.args:
        p = Path(str(arg).split("::")[0])
        if p.name == MANIFEST:
            out.append(p)
        elif p.is_dir():
            out.extend(p.rglob(MANIFEST))
    return out


def extra_suite_items(session: pytest.Session, config: pytest.Config, items: Sequence[pytest.Item],
                      extra: Sequence[str]) -> list[pytest.Item]:
    """Items of the suites named by ``--mirage-suite`` (and plugins) that the arguments did not cover."""
    from ..errors import ConfigError
    from ..suites.resolve import suite_ref

    seen = {it.ref for it in items if isinstance(it, MirageItem)}
    seen |= {str(p.resolve()) for p in collected_manifests(session)}
    base = Path(str(config.invocation_params.dir))
    out: list[pytest.Item] = []
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
        out.extend(x for x in session.genitems(col) if isinstance(x, pytest.Item))
    return out
