"""The objects behind the ``mirage``, ``mirage_case`` and ``mirage_model`` fixtures, for teams'
own tests (the fixture functions themselves are in ``plugin.py``)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from .collect import Host, record_result

if TYPE_CHECKING:
    from ..models.base import Answer
    from ..models.registry import ModelSpec
    from ..results import CaseResult
    from ..suites.model import Case


def marker_cases(ctl: Host, suite: str, lang: str | None, base: Path) -> list[tuple[str, Case]]:
    """The (suite ref, case) pairs of ``@pytest.mark.mirage(suite=..., lang=...)``."""
    from ..errors import MirageError
    from ..suites.resolve import suite_ref

    try:
        ref = suite_ref(str(suite), base)
        s = ctl.ctx.suite(ref)
        ctl.ctx.register_suite(s, ref)
    except MirageError as exc:
        raise pytest.UsageError(f"@pytest.mark.mirage(suite={suite!r}): {exc}") from None
    langs = {x.strip() for x in lang.split(",")} if lang else None
    cases = [(ref, c) for c in ctl.ctx.run_cases(s) if langs is None or c.lang in langs]
    if not cases:
        raise pytest.UsageError(f"@pytest.mark.mirage(suite={suite!r}, lang={lang!r}): no case of suite "
                                f"{s.name!r} matches (its languages: {', '.join(sorted({c.lang for c in s.cases}))})")
    return [(r, c) for r, c in cases if ctl.ctx.in_shard(s, c)]  # --mirage-shard K/N: this shard's cases


def ref_of(ctl: Host, case: Case) -> str:
    ref = ctl.ctx.ref_of_suite(case.suite)
    if ref is None:
        raise pytest.UsageError(f"case {case.id!r} belongs to suite {case.suite!r}, which this run has not "
                                "loaded (use the mirage_case fixture with @pytest.mark.mirage(suite=...))")
    return ref


def parametrize(metafunc: pytest.Metafunc, ctl: Host) -> None:
    """``mirage_case`` once per case of the test's ``mirage`` marker; ``mirage_model`` once per model."""
    names = metafunc.fixturenames
    if "mirage_case" in names:
        marker = metafunc.definition.get_closest_marker("mirage")
        if marker is None or not (marker.kwargs.get("suite") or marker.args):
            raise pytest.UsageError(f"{metafunc.definition.nodeid}: the mirage_case fixture needs "
                                    "@pytest.mark.mirage(suite=NAME_OR_PATH[, lang='hi'])")
        pairs = marker_cases(ctl, marker.kwargs.get("suite") or marker.args[0], marker.kwargs.get("lang"),
                             Path(str(metafunc.definition.path)).parent)
        metafunc.parametrize("mirage_case", [c for _, c in pairs], ids=[f"{c.lang}/{c.id}" for _, c in pairs])
    if "mirage_model" in names:
        specs = ctl.ctx.settings.models
        metafunc.parametrize("mirage_model", [ModelUnderTest(ctl, s) for s in specs],
                             ids=[ctl.ctx.model_name(s) for s in specs])


class ModelUnderTest:
    """A configured model under test, for tests that want its answers (see the ``mirage_model`` fixture)."""

    def __init__(self, ctl: Host, spec: ModelSpec) -> None:
        self._ctl = ctl
        self.spec = spec

    @property
    def name(self) -> str:
        return self._ctl.ctx.model_name(self.spec)

    def answer(self, case: Case) -> Answer:
        """The model's answer to ``case`` (raises ModelError when it has none)."""
        from ..engine import run_requests
        from ..errors import ModelError
        from ..evaluate.requests import build_request

        ctx = self._ctl.ctx
        adapter = ctx.adapter(self.spec)
        ref = ref_of(self._ctl, case)
        (ans,) = run_requests(adapter, [build_request(ctx.suite(ref), case, adapter.retrieves)], ctx.engine)
        if isinstance(ans, BaseException):
            raise ans if isinstance(ans, ModelError) else ModelError(str(ans))
        return ans.with_model(self.name)

    def __repr__(self) -> str:
        return f"ModelUnderTest({self.spec.safe_raw!r})"


class MirageChecker:
    """The ``mirage`` fixture's object (see its docstring)."""

    def __init__(self, ctl: Host, request: pytest.FixtureRequest) -> None:
        self._ctl = ctl
        self._request = request

    def check(self, answer: Any, *rules: str, case: Case | None = None, model: str | None = None) -> CaseResult:
        """Score ``answer`` for ``case`` and check ``rules`` (plus the suite's thresholds)."""
        from ..errors import MirageError
        from ..evaluate.checks import check_answer

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
            result = check_answer(self._ctl.ctx, self._ctl.judging, ref_of(self._ctl, case), case, answer,
                                  rules, model=model, where=node.nodeid)
        except MirageError as exc:
            pytest.fail(f"{case.source}: case {case.id}: {exc}", pytrace=False)
        record_result(node, result)
        if result.failures:
            pytest.fail(f"{case.source}: case {case.id} ({case.lang}) with {model}:\n" + "\n".join(result.failures),
                        pytrace=False)
        return result
