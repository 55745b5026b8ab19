"""``replay:PATH``: answers recorded in a run file (see ``--mirage-record``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import ConfigError, ModelError
from ..suites.runs import load_run_file
from .base import Answer, ModelRequest
from .registry import ModelSpec


class ReplayModel:
    """Replays recorded answers; a case missing from the file is an error naming the case."""

    retrieves = True  # a recorded run carries its own retrieved ids/contexts

    def __init__(self, path: Path, model: str | None = None) -> None:
        if not path.is_file():
            raise ConfigError(f"replay:{path}: no such run file; record one with --mirage-record PATH")
        rows = load_run_file(path)
        names = sorted({a.model for _, a in rows})
        if model is None:
            if len(names) > 1:
                raise ConfigError(f"replay:{path} holds answers of several models {names}; "
                                  f"pick one with replay:{path}?model=NAME")
            model = names[0] if names else path.stem
        elif model not in names:
            raise ConfigError(f"replay:{path}?model={model}: no such model in the file; found {names}")
        self.name = model
        self.path = path
        self._answers: dict[tuple[str | None, str], Answer] = {}
        for suite, ans in rows:
            if ans.model == model:
                self._answers[(suite, ans.case_id)] = ans

    def cache_identity(self) -> Mapping[str, Any] | None:
        return None

    def close(self) -> None:
        pass

    def answer_batch(self, requests: Sequence[ModelRequest]) -> list[Answer | Exception]:
        out: list[Answer | Exception] = []
        for r in requests:
            ans = self._answers.get((r.case.suite, r.case.id)) or self._answers.get((None, r.case.id))
            if ans is None:
                out.append(ModelError(f"replay:{self.path}: no recorded answer of model {self.name!r} for "
                                      f"case {r.case.id!r} of suite {r.case.suite!r}"))
            else:
                out.append(ans)
        return out


def create(spec: ModelSpec) -> ReplayModel:
    if not spec.arg:
        raise ConfigError("--mirage-model replay: needs a run file, e.g. replay:runs/gpt4o.jsonl")
    return ReplayModel(Path(spec.arg), model=spec.options.get("model"))
