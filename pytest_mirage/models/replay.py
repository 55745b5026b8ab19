"""``replay:PATH``: answers recorded in a run file (see ``--mirage-record``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import ConfigError, ModelError
from ..suites.model import Suite
from ..suites.runs import RunLine, load_run_lines, match_problem
from .base import Answer, ModelRequest
from .registry import ModelSpec


def to_answer(line: RunLine) -> Answer:
    """The recorded answer of a run line."""
    return Answer(case_id=line.case_id, model=line.model, output=line.output, answer=line.answer,
                  citations=line.citations, retrieved=line.retrieved, contexts=line.contexts,
                  truncated=line.truncated)


def load_run_file(path: Path, default_model: str | None = None) -> list[tuple[str | None, Answer]]:
    """Parse a run file into ``(suite or None, Answer)`` pairs; raises SuiteError naming file:line."""
    return [(r.suite, to_answer(r)) for r in load_run_lines(path, default_model)]


class ReplayModel:
    """Replays recorded answers; a case missing from the file is an error naming the case.

    Lines without a ``suite`` field apply to any suite with that case id; before they answer the
    cases of a suite, :meth:`check_suite` makes sure the file belongs to it (see
    :func:`pytest_mirage.suites.runs.match_problem`), so a file recorded for another suite whose case
    ids happen to match is an error naming the file, never a silent pass.
    """

    retrieves = True  # a recorded run carries its own retrieved ids/contexts

    def __init__(self, path: Path, model: str | None = None, name: str | None = None) -> None:
        if not path.is_file():
            raise ConfigError(f"replay:{path}: no such run file; record one with --mirage-record PATH")
        lines = load_run_lines(path)
        names = sorted({r.model for r in lines})
        if model is None:
            if len(names) > 1:
                raise ConfigError(f"replay:{path} holds answers of several models {names}; "
                                  f"pick one with replay:{path}?model=NAME")
            model = names[0] if names else path.stem
        elif model not in names:
            raise ConfigError(f"replay:{path}?model={model}: no such model in the file; found {names}")
        self.recorded = model  # the model's name in the file
        self.name = name or model  # its name in this run (name= in the spec)
        self.path = path
        self._lines: list[RunLine] = [r for r in lines if r.model == model]
        self._answers: dict[tuple[str | None, str], Answer] = {(r.suite, r.case_id): to_answer(r)
                                                               for r in self._lines}
        self._checked: dict[str, str | None] = {}

    def check_suite(self, suite: Suite) -> str | None:
        """Why this file's lines do not belong to ``suite`` (``replay:PATH:LINE: ...``), or None."""
        if suite.name not in self._checked:
            found = match_problem(self._lines, suite)
            self._checked[suite.name] = None if found is None else f"replay:{self.path}:{found[0]}: {found[1]}"
        return self._checked[suite.name]

    def cache_identity(self) -> Mapping[str, Any] | None:
        return None

    def close(self) -> None:
        pass

    def answer_batch(self, requests: Sequence[ModelRequest]) -> list[Answer | Exception]:
        out: list[Answer | Exception] = []
        for r in requests:
            if (mismatch := self.check_suite(r.suite)) is not None:
                out.append(ModelError(mismatch))
                continue
            ans = self._answers.get((r.case.suite, r.case.id)) or self._answers.get((None, r.case.id))
            if ans is None:
                out.append(ModelError(f"replay:{self.path}: no recorded answer of model {self.recorded!r} for "
                                      f"case {r.case.id!r} of suite {r.case.suite!r}"))
            else:
                out.append(ans)
        return out


def create(spec: ModelSpec) -> ReplayModel:
    if not spec.arg:
        raise ConfigError("--mirage-model replay: needs a run file, e.g. replay:runs/gpt4o.jsonl")
    return ReplayModel(Path(spec.arg), model=spec.options.get("model"),
                       name=spec.display_name if "name" in spec.options else None)
