"""support_nli through transformers with tiny NLI checkpoints saved in tmp_path: labels from
id2label, a fixture biased to known probabilities gives exactly those values, sentence/citation
pairing as MIRAGE-Bench defines it, batching across items and tokenizer truncation."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from pytest_mirage.errors import ConfigError, ModelError
from pytest_mirage.judges.base import JudgeItem
from pytest_mirage.judges.citing import cited_sentences, resolve_device
from pytest_mirage.judges.nli import NLIJudge, label_indices, support_pairs
from pytest_mirage.judges.spec import create_judge
from pytest_mirage.suites.model import Passage

P1 = Passage("p1", "The deck of the bridge is 2460 metres long.", title="Millau Viaduct")
P2 = Passage("p2", "Supply ships come nine times a year.")


def it(answer: str, citations: tuple[str, ...] = (), passages: tuple[Passage, ...] = (P1, P2)) -> JudgeItem:
    return JudgeItem("s/c/m", "en", "How long is the deck?", answer, passages, citations)


# ---------------------------------------------------------------- pure parts (no model)


def test_labels_from_id2label() -> None:
    assert label_indices({0: "ENTAILMENT", 1: "NEUTRAL", 2: "CONTRADICTION"}) == (0, 1)
    assert label_indices({"0": "contradiction", "1": "neutral", "2": "entailment"}) == (2, 1)
    assert label_indices({0: "entailment", 1: "not_entailment"}) == (0, None)
    with pytest.raises(ConfigError, match="has no entailment label"):
        label_indices({0: "LABEL_0", 1: "LABEL_1"})


def test_pairs_follow_mirage_support() -> None:
    pairs = support_pairs(it("The deck is 2460 m [p1]. Ships come often [p1, p2]. Uncited sentence. Bad [p9]."))
    premise = "Millau Viaduct\nThe deck of the bridge is 2460 metres long."
    assert pairs == [(premise, "The deck is 2460 m."), (premise, "Ships come often."),
                     (P2.text, "Ships come often."), (None, "Bad.")]
    # "[1]"-style indices name passages in prompt order
    assert support_pairs(it("The deck is long [2].")) == [(P2.text, "The deck is long.")]
    # no markers, but the adapter reported citations: every sentence cites them
    assert [s.cited for s in cited_sentences(it("One. Two.", citations=("p2",)))] == [("p2",), ("p2",)]
    assert support_pairs(it("No citation at all.")) == []


def test_device_auto_resolves() -> None:
    pytest.importorskip("torch", reason="needs the hf extra: pip install 'pytest-mirage[hf]'")
    assert resolve_device("auto") in ("cpu", "cuda", "mps")
    assert resolve_device("cuda:1") == "cuda:1"


# ---------------------------------------------------------------- tiny checkpoints


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    pytest.importorskip("torch", reason="needs the hf extra: pip install 'pytest-mirage[hf]'")
    pytest.importorskip("transformers", reason="needs the hf extra: pip install 'pytest-mirage[hf]'")
    from tests.helpers.tiny_models import nli_model

    root = tmp_path_factory.mktemp("nli")
    return {
        "entail": nli_model(root / "entail", (0.7, 0.2, 0.1)),
        "contradict": nli_model(root / "contradict", (0.05, 0.15, 0.8), labels=("ENTAILMENT", "NEUTRAL", "CONTRADICTION")),
        "two": nli_model(root / "two", (0.25, 0.75), labels=("not_entailment", "entailment")),
        "random": nli_model(root / "random", None),
        "nolabels": nli_model(root / "nolabels", (0.5, 0.5), labels=("LABEL_0", "LABEL_1")),
    }


def test_biased_model_gives_its_probabilities(models: dict[str, Path]) -> None:
    judge = create_judge(f"support_nli=hf:{models['entail']}?batch_size=2&device=cpu")
    items = [it("The deck is 2460 m [p1]. Ships come often [p1, p2]."), it("Only uncited text."),
             it("Bad citation [p9]. Good one [p1]."), it("", passages=())]
    scores = judge.score(items)
    assert scores[0].values["support_nli"] == pytest.approx(0.7, abs=1e-6)
    assert scores[0].values["support_nli_neutral"] == pytest.approx(0.2, abs=1e-6)
    assert scores[1].values == {"support_nli": None, "support_nli_neutral": None}
    assert scores[1].reasons["support_nli"].startswith("the answer cites no passage")
    # a citation naming no passage is a pair with probability 0: (0 + 0.7) / 2
    assert scores[2].values["support_nli"] == pytest.approx(0.35, abs=1e-6)
    assert scores[3].reasons["support_nli"] == "the generator saw no passages"
    h = judge.health
    assert (h.items, h.calls, h.batches) == (4, 4, 2)  # 4 real pairs across items, batches of 2
    assert h.nulls == {"support_nli": 2, "support_nli_neutral": 2}

    contra = NLIJudge(str(models["contradict"]), device="cpu").score([items[0]])[0]
    assert contra.values["support_nli"] == pytest.approx(0.05, abs=1e-6)
    assert contra.values["support_nli_neutral"] == pytest.approx(0.15, abs=1e-6)


def test_entailment_label_anywhere_and_no_neutral(models: dict[str, Path]) -> None:
    [s] = NLIJudge(str(models["two"]), device="cpu").score([it("The deck is long [p1].")])
    assert s.values["support_nli"] == pytest.approx(0.75, abs=1e-6)
    assert s.values["support_nli_neutral"] is None
    assert s.reasons["support_nli_neutral"] == "the NLI model has no neutral label"
    with pytest.raises(ConfigError, match="no entailment label"):
        NLIJudge(str(models["nolabels"]), device="cpu").score([it("x [p1].")])


def test_long_premises_and_hypotheses_are_truncated_by_the_tokenizer(models: dict[str, Path]) -> None:
    long_passage = Passage("p1", "the deck of the bridge is long " * 200)
    judge = NLIJudge(str(models["random"]), device="cpu", max_length=64)
    scores = judge.score([it("The deck is long [p1].", passages=(long_passage,)),
                          it("the cat sat on the mat " * 40 + "[p1].", passages=(long_passage,))])
    for s in scores:
        value = s.values["support_nli"]
        assert value is not None and 0.0 < value < 1.0 and not math.isnan(value)


def test_batched_values_equal_one_by_one(models: dict[str, Path]) -> None:
    items = [it(f"Sentence number {i} about the deck [p1]. Ships [p2].") for i in range(7)]
    batched = NLIJudge(str(models["random"]), device="cpu", batch_size=16).score(items)
    single = NLIJudge(str(models["random"]), device="cpu", batch_size=1).score(items)
    for a, b in zip(batched, single, strict=True):
        assert a.values["support_nli"] == pytest.approx(b.values["support_nli"], abs=1e-5)


def test_missing_checkpoint_is_a_clear_error(tmp_path: Path) -> None:
    pytest.importorskip("transformers", reason="needs the hf extra: pip install 'pytest-mirage[hf]'")
    with pytest.raises(ModelError, match="cannot load the NLI checkpoint"):
        NLIJudge(str(tmp_path / "nowhere"), device="cpu").score([it("x [p1].")])


@pytest.mark.parametrize("roberta", [False, True])
def test_pairs_are_encoded_like_the_tokenizer_does(tmp_path: Path, roberta: bool) -> None:
    pytest.importorskip("transformers", reason="needs the hf extra: pip install 'pytest-mirage[hf]'")
    from tests.helpers.tiny_models import tokenizer

    tok = tokenizer(tmp_path / "tok", roberta=roberta)
    judge = NLIJudge(str(tmp_path / "tok"), max_length=48)
    judge._loaded = (tok, None, "cpu", 0, None, 48)  # the tokenizer alone is needed here
    pairs = [("the cat sat on the mat", "el gato se sentó"), ("the deck of the bridge is long " * 20, "the cat sat"),
             ("长江全长约6300公里", "แมวนั่งบนเสื่อ")]
    judge._layout()  # read first: its probe calls the tokenizer, which resets the backend
    tok(["x"], padding="max_length", truncation=True, max_length=8)  # leaves both set on the backend
    for (premise, hypothesis), (ids, types) in zip(pairs, judge._encode(pairs), strict=True):
        enc = tok(premise, hypothesis, truncation="only_first", max_length=48)
        assert ids == enc["input_ids"]
        assert types == enc.get("token_type_ids", [0] * len(ids))


# ---------------------------------------------------------------- batching does not change values


def test_length_batches_sort_cut_and_keep_one_length_per_batch() -> None:
    from pytest_mirage.judges.nli import length_batches

    assert length_batches([], 4) == []
    # sorted by length (stable), cut every 4
    assert length_batches([5, 3, 5, 3, 5, 3, 5, 3], 4) == [[1, 3, 5, 7], [0, 2, 4, 6]]
    # a batch more than half full ends where the length changes; a smaller one takes the next length
    assert length_batches([7, 7, 7, 9, 9, 9, 9, 9], 4) == [[0, 1, 2], [3, 4, 5, 6], [7]]
    assert length_batches([7, 7, 9, 9, 9], 4) == [[0, 1, 2, 3], [4]]
    assert length_batches([1, 2, 3, 4], 2) == [[0, 1], [2, 3]]  # batch_size 2: plain cuts
    lengths = [(i * 37) % 11 for i in range(200)]
    batches = length_batches(lengths, 16)
    assert sorted(i for b in batches for i in b) == list(range(200))
    assert all(len(b) <= 16 for b in batches)
    flat = [lengths[i] for b in batches for i in b]
    assert flat == sorted(flat)


def _reference_probabilities(path: Path, pairs: list[tuple[str, str]], limit: int) -> list[list[float]]:
    """One pair at a time through the tokenizer's own pair encoding and the model: no batching,
    no padding, no assembly of ours."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(path)
    model = AutoModelForSequenceClassification.from_pretrained(path).eval()
    out = []
    with torch.inference_mode():
        for premise, hypothesis in pairs:
            enc = tok(premise, hypothesis, truncation="only_first", max_length=limit, return_tensors="pt")
            out.append(torch.softmax(model(**enc).logits, dim=-1)[0].tolist())
    return out


PAIRS = [("the cat sat on the mat", "the cat sat"), ("the deck of the bridge is 2460 metres long", "it is long"),
         ("the deck of the bridge is long " * 30, "the deck is 2460 metres"),  # premise cut to the limit
         ("supply ships come nine times a year", "ships come"), ("长江全长约6300公里", "长江很长"),
         ("el gato se sentó", "der Bodensee ist 251 Meter tief und sehr groß"), ("x", "y"),
         ("the cat sat on the mat", "the cat sat")]  # a repeated pair


@pytest.mark.parametrize("batch_size", [1, 3, 256])
def test_batched_probabilities_equal_the_tokenizer_and_model_one_pair_at_a_time(
        models: dict[str, Path], batch_size: int) -> None:
    judge = NLIJudge(str(models["random"]), device="cpu", batch_size=batch_size, max_length=48)
    got = judge.probabilities(PAIRS)
    want = _reference_probabilities(models["random"], PAIRS, 48)
    for g, w in zip(got, want, strict=True):
        assert g == pytest.approx(w, abs=1e-6)
    assert judge.health.calls == len(PAIRS) - 1  # the repeated pair ran once
    assert len({tuple(p) for p in got}) == len(PAIRS) - 1  # the random model tells the pairs apart


def test_order_duplicates_and_padding_do_not_change_values(models: dict[str, Path]) -> None:
    judge = NLIJudge(str(models["random"]), device="cpu", batch_size=4, max_length=48)
    alone = {pair: judge.probabilities([pair])[0] for pair in PAIRS}  # no padding, batches of one
    shuffled = PAIRS[::-1] + PAIRS[2:5] * 3  # other order, more repeats, other batch neighbours
    for pair, p in zip(shuffled, judge.probabilities(shuffled), strict=True):
        assert p == pytest.approx(alone[pair], abs=1e-6)


def test_without_the_fast_backend_the_tokenizer_call_gives_the_same_values(models: dict[str, Path]) -> None:
    fast = NLIJudge(str(models["random"]), device="cpu", max_length=48)
    plain = NLIJudge(str(models["random"]), device="cpu", max_length=48)
    plain._backend_tokenize = False  # what a tokenizer without a Rust backend gets
    assert plain._encode(PAIRS) == fast._encode(PAIRS)
    for a, b in zip(plain.probabilities(PAIRS), fast.probabilities(PAIRS), strict=True):
        assert a == pytest.approx(b, abs=1e-7)


def test_judge_scores_equal_one_answer_at_a_time(models: dict[str, Path]) -> None:
    passages = (P1, P2, Passage("p3", "the deck of the bridge is long " * 30))
    items = [it(f"Answer {i} says the deck is {2000 + i} m [p{1 + i % 3}]. Ships come {i} times [p2, p3]. "
                f"{'Again the cat ' * (i % 4)}sat [p1].", passages=passages) for i in range(9)]
    items += items[:3]  # another system giving the same answers
    judge = NLIJudge(str(models["random"]), device="cpu", batch_size=5)
    together = judge.score(items)
    for item, s in zip(items, together, strict=True):
        [one] = NLIJudge(str(models["random"]), device="cpu", batch_size=1).score([item])
        for metric in ("support_nli", "support_nli_neutral"):
            assert s.values[metric] == pytest.approx(one.values[metric], abs=1e-6)
