"""train-judge and the ``ares=classifier:DIR`` judge on a tiny random BERT built in tmp_path."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_mirage.errors import ConfigError
from pytest_mirage.judges.base import JudgeItem
from pytest_mirage.judges.spec import create_judge, parse_judge_spec
from pytest_mirage.suites.model import Passage
from tests.helpers.judge_suite import write_suite

pytest.importorskip("torch", reason="needs the hf extra: pip install 'pytest-mirage[hf]'")
pytest.importorskip("transformers", reason="needs the hf extra: pip install 'pytest-mirage[hf]'")

ITEMS = [
    JudgeItem("s/a/m", "en", "How long is the harbour bridge?", "The bridge is 2460 metres long [bridge#0].",
              (Passage("bridge#0", "The harbour bridge is 2460 metres long.", "Harbour bridge"),
               Passage("ships#0", "Supply ships come nine times a year.", "Supply ships")), ("bridge#0",)),
    JudgeItem("s/b/m", "es", "¿Cuánto cuesta el viaje?", "Cuesta 40 euros.",
              (Passage("tren#1", "El viaje dura cinco horas y cuesta 40 euros."),)),
    JudgeItem("s/c/m", "en", "How tall is the lighthouse?", "", (Passage("lighthouse#0", "35 metres tall."),)),
    JudgeItem("s/d/m", "en", "How tall is the lighthouse?", "It is 35 metres tall.", ()),
]


ALL = ("context_relevance", "answer_faithfulness", "answer_relevance")


def _train(data: Path, base: Path, out: Path, seed: int = 0, judges: tuple[str, ...] = ALL) -> dict[str, dict[str, Any]]:
    from pytest_mirage.cli.train_judge import train_judges
    from pytest_mirage.judges.ares_train import TrainSettings

    settings = TrainSettings(epochs=3, patience=1, batch_size=8, learning_rate=1e-3, max_length=64, max_steps=6,
                             seed=seed, device="cpu")
    return train_judges(data, str(base), out, settings, judges)


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    from pytest_mirage.cli.train_judge import make_judge_data
    from tests.helpers.judge_suite import tiny_classifier

    root = tmp_path_factory.mktemp("ares")
    suite = write_suite(root / "suite")
    make_judge_data(str(suite), root / "data", seed=0)
    base = tiny_classifier(root / "base")
    _train(root / "data", base, root / "judges")
    return root, base, root / "judges"


def _scores(judges: Path, spec: str = "ares") -> list[dict[str, float | None]]:
    judge = create_judge(parse_judge_spec(f"{spec}=classifier:{judges}?device=cpu"))
    return [dict(s.values) for s in judge.score(ITEMS)]


def test_spec_grammar_for_the_classifier_backend(tmp_path: Path) -> None:
    spec = parse_judge_spec(f"ares=classifier:{tmp_path}?batch_size=4&max_length=128")
    assert (spec.judge, spec.backend, spec.model, spec.llm) == ("ares", "classifier", str(tmp_path), False)
    assert spec.metrics == ("ares_context_relevance", "ares_answer_faithfulness", "ares_answer_relevance")
    assert spec.options == {"batch_size": 4, "max_length": 128}
    one = parse_judge_spec(f"ares_answer_faithfulness=classifier:{tmp_path}")
    assert one.metrics == ("ares_answer_faithfulness",)
    assert parse_judge_spec("ares=openai:gpt-4o-mini").llm  # the prompted ARES judge is unchanged
    with pytest.raises(ConfigError, match=r"unknown option 'batchsize'.*Did you mean: batch_size"):
        parse_judge_spec(f"ares=classifier:{tmp_path}?batchsize=4")
    with pytest.raises(ConfigError, match="needs a checkpoint name or path"):
        parse_judge_spec("ares=classifier")


def test_trained_judges_have_cards_with_data_hash_and_dev_scores(trained: tuple[Path, Path, Path]) -> None:
    root, base, judges = trained
    manifest = json.loads((root / "data" / "manifest.json").read_text())
    for judge in ("context_relevance", "answer_faithfulness", "answer_relevance"):
        card = json.loads((judges / judge / "mirage-judge.json").read_text())
        assert card["data_sha256"] == manifest["data_sha256"]
        assert card["metric"] == f"ares_{judge}" and card["base_model"] == str(base)
        assert card["steps"] <= 6 and 1 <= card["best_epoch"] <= card["epochs_run"] <= 3
        dev = card["dev"]
        assert set(dev["per_lang"]) == {"en", "es"} or set(dev["per_lang"]) <= {"en", "es"}
        assert dev["overall"]["n"] == sum(b["n"] for b in dev["per_lang"].values())
        assert 0 <= dev["overall"]["accuracy"] <= 1
        assert (judges / judge / "config.json").is_file()
    summary = json.loads((judges / "train-judge.json").read_text())
    assert set(summary["judges"]) == {"context_relevance", "answer_faithfulness", "answer_relevance"}


def test_loads_as_a_judge_and_scores_with_nulls_where_inputs_are_missing(trained: tuple[Path, Path, Path]) -> None:
    _root, _base, judges = trained
    scores = _scores(judges)
    for s in scores[:2]:
        assert all(v is not None and 0 < v < 1 for v in s.values())
    assert scores[2]["ares_answer_faithfulness"] is None and scores[2]["ares_answer_relevance"] is None
    assert scores[2]["ares_context_relevance"] is not None
    assert scores[3]["ares_context_relevance"] is None and scores[3]["ares_answer_relevance"] is not None
    # one metric from the folder, or from its own subfolder: the same values
    one = _scores(judges, "ares_answer_faithfulness")
    sub = create_judge(parse_judge_spec(f"ares_answer_faithfulness=classifier:{judges / 'answer_faithfulness'}"
                                        "?device=cpu")).score(ITEMS)
    assert [s["ares_answer_faithfulness"] for s in one] == [s.values["ares_answer_faithfulness"] for s in sub] == \
        [s["ares_answer_faithfulness"] for s in scores]
    with pytest.raises(ConfigError, match="holds the ares_answer_faithfulness judge only"):
        create_judge(parse_judge_spec(f"ares_context_relevance=classifier:{judges / 'answer_faithfulness'}"))


def test_same_seed_same_model_and_scores(trained: tuple[Path, Path, Path], tmp_path: Path) -> None:
    root, base, judges = trained
    again = _train(root / "data", base, tmp_path / "again")
    first = {j: json.loads((judges / j / "mirage-judge.json").read_text()) for j in again}
    assert {j: c["weights_sha256"] for j, c in again.items()} == {j: c["weights_sha256"] for j, c in first.items()}
    for a, b in zip(_scores(tmp_path / "again"), _scores(judges), strict=True):
        assert a.keys() == b.keys()
        for k in a:
            assert (a[k] is None and b[k] is None) or a[k] == pytest.approx(b[k], abs=1e-6)
    other = _train(root / "data", base, tmp_path / "seed1", seed=1, judges=("answer_faithfulness",))
    assert other["answer_faithfulness"]["weights_sha256"] != first["answer_faithfulness"]["weights_sha256"]


def test_a_missing_judge_folder_or_bad_data_is_a_clear_error(trained: tuple[Path, Path, Path], tmp_path: Path) -> None:
    from pytest_mirage.cli.train_judge import parse_judges

    _root, _base, judges = trained
    partial = tmp_path / "partial"
    (partial / "context_relevance").mkdir(parents=True)
    with pytest.raises(ConfigError, match="no trained judge for ares_answer_faithfulness, ares_answer_relevance"):
        create_judge(parse_judge_spec(f"ares=classifier:{partial}"))
    with pytest.raises(ConfigError, match="no such folder"):
        create_judge(parse_judge_spec(f"ares=classifier:{tmp_path / 'missing'}"))
    with pytest.raises(ConfigError, match="Did you mean: answer_faithfulness"):
        parse_judges("answer_faithfulnes")
    with pytest.raises(ConfigError, match="no judge-data manifest"):
        _train(tmp_path / "nothing", judges, tmp_path / "out")
