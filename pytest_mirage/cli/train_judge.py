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
                    base: Path | None = None) -> tuple[Path, Path, dict[str, Any]]:
    """Build and write the judge data of a suite (folder, bundled name or source spec)."""
    from ..finish.partial import suite_content_hash
    from ..judges import ares_data
    from ..suites.resolve import load_ref, suite_ref

    suite = load_ref(suite_ref(suite_arg, base or Path.cwd()))
    ds = ares_data.build(suite, seed, dev_share=ares_data.DEFAULT_DEV_SHARE if dev_share is None else dev_share,
                         suite_hash=suite_content_hash(suite))
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
