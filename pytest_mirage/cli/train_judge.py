"""``python -m pytest_mirage make-judge-data`` and ``train-judge``: ARES's fine-tuned judges.

``make-judge-data SUITE --out DIR --seed 0`` writes the balanced, versioned training rows of the three
judges (judges/ares_data.py); ``train-judge DIR --model CHECKPOINT --out MODELS`` fine-tunes one
cross-encoder per judge (judges/ares_train.py) into ``MODELS/<judge>``, which
``--mirage-judges ares=classifier:MODELS`` loads (judges/ares_classifier.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..errors import ConfigError


def make_judge_data(suite_arg: str, out: Path, *, seed: int = 0, dev_share: float | None = None,
                    base: Path | None = None, generator: str | None = None, cache: Path | None = None,
                    cache_mode: str = "use") -> tuple[Path, Path, dict[str, Any]]:
    """Build and write the judge data of a suite (folder, bundled name or source spec).

    ``generator``: a model spec (``openai:``, ``vllm:``, ``hf:``, ``py:``) that writes one
    contradictory answer per case with ARES's few-shot prompt (:func:`ares_data.contradiction_prompts`),
    through the engine: cached in ``cache`` (a rerun makes no call), retried, ``cache_mode``
    ``replay-only`` never calls the model."""
    from ..finish.partial import suite_content_hash
    from ..judges import ares_data
    from ..suites.resolve import load_ref, suite_ref

    suite = load_ref(suite_ref(suite_arg, base or Path.cwd()))
    generated: dict[str, str] | None = None
    generation: dict[str, Any] = {}
    if generator is not None:
        generated, generation = _generate_contradictions(suite, seed, generator, cache, cache_mode)
    ds = ares_data.build(suite, seed, dev_share=ares_data.DEFAULT_DEV_SHARE if dev_share is None else dev_share,
                         suite_hash=suite_content_hash(suite), generated=generated)
    if generation:
        generation["kept"] = sum(1 for r in ds.rows if r.kind == "generated_contradiction")
        ds.generation = generation
    if not ds.rows:
        reasons = ", ".join(f"{n} {why}" for why, n in sorted(ds.skipped.items())) or "no case"
        raise ConfigError(f"make-judge-data {suite_arg}: no training rows ({reasons}); a case needs a relevant "
                          "passage with text and a reference answer")
    data, manifest = ares_data.write(ds, out)
    return data, manifest, ds.counts()


def parse_judges(text: str | None) -> tuple[str, ...]:
    from ..errors import did_you_mean
    from ..judges.ares_data import JUDGES

    if not text or text == "all":
        return JUDGES
    names = tuple(dict.fromkeys(t.strip() for t in text.split(",") if t.strip()))
    for n in names:
        if n not in JUDGES:
            raise ConfigError(f"train-judge --judges: unknown judge {n!r}.{did_you_mean(n, JUDGES)} Expected "
                              f"all or a comma-separated list of {', '.join(JUDGES)}")
    return names


def train_judges(data_dir: Path, model: str, out: Path, settings: Any, judges: Sequence[str],
                 progress: Callable[[str], None] | None = None) -> dict[str, dict[str, Any]]:
    """Train every judge of ``judges`` on the dataset in ``data_dir``; their cards by judge."""
    import json

    from ..judges import ares_data
    from ..judges.ares_train import train_judge

    manifest, rows = ares_data.load(data_dir)
    cards = {}
    for judge in judges:
        cards[judge] = train_judge(judge, rows, model, out / judge, settings, manifest, progress)
    summary = {"schema": "pytest-mirage/ares-judges/1", "data_sha256": manifest["data_sha256"],
               "suite": manifest.get("suite"), "base_model": model,
               "judges": {j: {"metric": c["metric"], "best_epoch": c["best_epoch"], "dev": c["dev"]["overall"],
                              "per_lang": c["dev"]["per_lang"]} for j, c in cards.items()}}
    (out / "train-judge.json").write_text(json.dumps(summary, ensure_ascii=False, indent=2, sort_keys=True) + "\n",
                                          encoding="utf-8")
    return cards


def _generate_contradictions(suite: Any, seed: int, generator: str, cache: Path | None,
                             cache_mode: str) -> tuple[dict[str, str], dict[str, Any]]:
    from ..engine.scheduler import EngineSettings, run_requests
    from ..errors import ModelError
    from ..judges import ares_data
    from ..models.base import PromptRequest
    from ..models.registry import ModelRegistry, parse_model_spec

    spec = parse_model_spec(generator)
    adapter = ModelRegistry().create(spec)
    prompts = ares_data.contradiction_prompts(suite, seed)
    requests = [PromptRequest(id=cid, prompt=prompt, label="contradictory answer", lang=lang)
                for cid, lang, prompt in prompts]
    answers = run_requests(adapter, requests, EngineSettings(cache_dir=cache, cache_mode=cache_mode))
    failed = [(r.id, a) for r, a in zip(requests, answers, strict=True) if isinstance(a, BaseException)]
    if failed:
        cid, exc = failed[0]
        raise ModelError(f"make-judge-data --generator {spec.safe_raw}: {len(failed)} of {len(requests)} prompts "
                         f"failed (first: case {cid}: {exc}); fix the model or server and rerun (answers that "
                         "came back are cached)")
    out = {r.id: a.output for r, a in zip(requests, answers, strict=True) if not isinstance(a, BaseException)}
    return out, {"generator": spec.safe_raw, "prompt_version": ares_data.CONTRADICTION_PROMPT_VERSION,
                 "asked": len(requests)}
