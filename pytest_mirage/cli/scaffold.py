"""``python -m pytest_mirage new-suite PATH``: a valid, commented suite skeleton."""

from __future__ import annotations

import json
from pathlib import Path

from ..errors import ConfigError
from ..suites.loader import NAME_RE

MANIFEST_TEMPLATE = '''# A pytest-mirage suite. Format: docs/suite-format.md
[suite]
name = "{name}"                 # [a-z0-9][a-z0-9-]*, unique among your suites
description = "TODO: what this suite checks"
# "oracle": the harness gives each case's passages to the model (tests generation only).
# "retrieval": the model retrieves from corpus/ itself (tests the whole RAG pipeline).
mode = "{mode}"
cases = ["cases/*.jsonl"]       # one JSON object per line (see cases/example.jsonl)
{corpus_line}runs = ["runs/*.jsonl"]         # recorded answers of reference systems (replay format), optional
# built-in control systems shown on the leaderboard; `--mirage-model control:oracle` etc. also work
reference_models = ["control:oracle", "control:wrong-language", "control:no-citations", "control:random-passages"]
{k_line}
[prompt]
template = "mirage"             # the MIRAGE generation prompt, or a path to your own template file

[thresholds]                    # case level: METRIC[@LANG] = "OP VALUE"
"language_match" = ">= 0.5"

[gates]                         # per suite x language x model: METRIC[.STAT][@LANG] = "OP VALUE"
"language_match.mean" = ">= 0.8"
"citation_recall.mean" = ">= 0.5"
'''


def new_suite(path: Path, mode: str = "oracle", lang: str = "en") -> list[Path]:
    """Write a suite skeleton at ``path``; refuses to overwrite an existing suite."""
    if mode not in ("oracle", "retrieval"):
        raise ConfigError(f"--mode: found {mode!r}; expected oracle or retrieval")
    name = path.name.lower()
    if not NAME_RE.match(name):
        raise ConfigError(f"suite folder name {path.name!r} must match [a-z0-9][a-z0-9-]* (it becomes the suite name)")
    if (path / "suite.toml").exists():
        raise ConfigError(f"{path / 'suite.toml'} already exists; choose a new folder")
    (path / "cases").mkdir(parents=True, exist_ok=True)
    (path / "runs").mkdir(exist_ok=True)
    written = []
    manifest = MANIFEST_TEMPLATE.format(
        name=name, mode=mode,
        corpus_line='corpus = ["corpus/*.jsonl"]     # retrieval mode: chunks {id, doc, text, title?, lang?}\n' if mode == "retrieval" else "",
        k_line="k = 3                           # cut-off of hit_at_k, mrr_at_k, precision_at_k\n" if mode == "retrieval" else "")
    (path / "suite.toml").write_text(manifest, encoding="utf-8")
    written.append(path / "suite.toml")
    passages = [
        {"id": "1001#0", "title": "Example page", "text": "Replace this passage with a real one. It contains the answer: 42."},
        {"id": "1001#1", "title": "Example page", "text": "A hard negative: same topic, no answer."},
    ]
    case = {"id": f"{lang}-001", "lang": lang, "question": "What is the answer?",
            "passages": passages if mode == "oracle" else [], "relevant": ["1001#0"],
            "answers": ["The answer is 42."], "meta": {"category": "example"}}
    (path / "cases" / "example.jsonl").write_text(json.dumps(case, ensure_ascii=False) + "\n", encoding="utf-8")
    written.append(path / "cases" / "example.jsonl")
    if mode == "retrieval":
        (path / "corpus").mkdir(exist_ok=True)
        lines = [json.dumps({"id": p["id"], "doc": "1001", "title": p["title"], "text": p["text"], "lang": lang},
                            ensure_ascii=False) for p in passages]
        (path / "corpus" / "corpus.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
        written.append(path / "corpus" / "corpus.jsonl")
    return written
