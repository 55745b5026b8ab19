"""reranker_score through FlagEmbedding's FlagReranker with a tiny cross-encoder saved in tmp_path:
the mean *raw* score over the distinct cited passages."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_mirage.errors import ModelError
from pytest_mirage.judges.base import JudgeItem
from pytest_mirage.judges.citing import cited_passages
from pytest_mirage.judges.reranker import RerankerJudge
from pytest_mirage.judges.spec import create_judge
from pytest_mirage.suites.model import Passage

P1 = Passage("p1", "The deck of the bridge is 2460 metres long.")
P2 = Passage("p2", "Supply ships come nine times a year.")
P3 = Passage("p3", "el gato se sentó")


def it(answer: str, citations: tuple[str, ...] = ()) -> JudgeItem:
    return JudgeItem("s/c/m", "en", "How long is the deck?", answer, (P1, P2, P3), citations)


def test_distinct_cited_passages_in_order() -> None:
    assert [p.id for p in cited_passages(it("A [p2]. B [p1, p2]. C [p2]. D [p9]."))] == ["p2", "p1"]
    assert [p.id for p in cited_passages(it("No markers.", citations=("p3", "p1")))] == ["p3", "p1"]
    assert cited_passages(it("Nothing cited.")) == []


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    pytest.importorskip("torch", reason="needs the hf extra: pip install 'pytest-mirage[hf]'")
    pytest.importorskip("FlagEmbedding", reason="needs the hf extra: pip install 'pytest-mirage[hf]'")
    from tests.helpers.tiny_models import reranker_model

    root = tmp_path_factory.mktemp("reranker")
    return {"fixed": reranker_model(root / "fixed", 2.5), "random": reranker_model(root / "random", None)}


def test_biased_reranker_gives_its_raw_score(models: dict[str, Path]) -> None:
    judge = create_judge(f"reranker_score=flag:{models['fixed']}?device=cpu&batch_size=4")
    scores = judge.score([it("A [p1]. B [p1, p2]."), it("Nothing cited."), it("Only bad [p9].")])
    assert scores[0].values == {"reranker_score": pytest.approx(2.5, abs=1e-5)}  # raw: above 1
    assert scores[1].values == {"reranker_score": None}
    assert scores[1].reasons == {"reranker_score": "the answer cites no passage"}
    assert scores[2].values == {"reranker_score": None}
    assert judge.health.calls == 2 and judge.health.nulls == {"reranker_score": 2}


def test_mean_over_distinct_passages(models: dict[str, Path]) -> None:
    judge = RerankerJudge(str(models["random"]), device="cpu")
    q = "How long is the deck?"
    single = {p.id: judge.scores([(q, p.text)])[0] for p in (P1, P2)}
    [s] = judge.score([it("A [p1]. B [p1, p2]. C [p2].")])
    assert s.values["reranker_score"] == pytest.approx((single["p1"] + single["p2"]) / 2, abs=1e-5)
    assert single["p1"] != pytest.approx(single["p2"], abs=1e-6)  # the fixture tells inputs apart


def test_missing_checkpoint_is_a_clear_error(tmp_path: Path) -> None:
    pytest.importorskip("FlagEmbedding", reason="needs the hf extra: pip install 'pytest-mirage[hf]'")
    with pytest.raises(ModelError, match="cannot load the reranker"):
        RerankerJudge(str(tmp_path / "nowhere"), device="cpu").score([it("A [p1].")])


def test_identical_pairs_are_scored_once_with_the_same_values(models: dict[str, Path]) -> None:
    judge = RerankerJudge(str(models["random"]), device="cpu", batch_size=2)
    q = "How long is the deck?"
    alone = {p.id: RerankerJudge(str(models["random"]), device="cpu").scores([(q, p.text)])[0] for p in (P1, P2, P3)}
    # five systems citing the same passages of the same question: three distinct pairs
    items = [it(f"System {m} [p1]. More [p2].") for m in range(5)] + [it("Other [p3]. [p1]")]
    scores = judge.score(items)
    assert judge.health.calls == 3
    for s in scores[:5]:
        assert s.values["reranker_score"] == pytest.approx((alone["p1"] + alone["p2"]) / 2, abs=1e-5)
    assert scores[5].values["reranker_score"] == pytest.approx((alone["p3"] + alone["p1"]) / 2, abs=1e-5)
    assert judge.scores([(q, P2.text), (q, P1.text), (q, P2.text)]) == pytest.approx(
        [alone["p2"], alone["p1"], alone["p2"]], abs=1e-5)
