"""A small retrieval-mode suite (English and Spanish, 10 cases) for the ARES judge-data and
train-judge tests, written into a folder by :func:`write_suite`."""

from __future__ import annotations

import json
from pathlib import Path

# (doc, lang, title, chunks); the "lighthouse" document has one chunk (its strong negative is a BM25 neighbour)
DOCS = [
    ("bridge", "en", "Harbour bridge", ["The harbour bridge is 2460 metres long and opened in 1932.",
                                        "Trains cross the bridge every ten minutes during the day.",
                                        "The bridge was painted grey by Paul Hogan in 1988."]),
    ("ships", "en", "Supply ships", ["Supply ships come nine times a year to the island.",
                                     "The ships carry fuel, food and mail from Cape Town.",
                                     "In winter the ships do not sail because of the storms."]),
    ("lighthouse", "en", "Lighthouse", ["The lighthouse on the island is 35 metres tall and was built in 1877."]),
    ("lago", "es", "Lago Azul", ["El Lago Azul tiene 251 metros de profundidad.",
                                 "El lago se congela cada invierno desde diciembre.",
                                 "Miguel Torres fundó el museo del lago en 1990."]),
    ("tren", "es", "Tren del norte", ["El tren del norte sale a las ocho de la mañana.",
                                      "El viaje dura cinco horas y cuesta 40 euros.",
                                      "No hay servicio de tren los domingos."]),
]
CASES = [
    ("en-001", "en", "How long is the harbour bridge?", "bridge#0", "The harbour bridge is 2460 metres long."),
    ("en-002", "en", "How often do trains cross the bridge?", "bridge#1", "Trains cross it every ten minutes."),
    ("en-003", "en", "How many times a year do supply ships come?", "ships#0", "Supply ships come nine times a year."),
    ("en-004", "en", "What do the ships carry?", "ships#1", "They carry fuel, food and mail from Cape Town."),
    ("en-005", "en", "How tall is the lighthouse?", "lighthouse#0", "The lighthouse is 35 metres tall."),
    ("en-006", "en", "Who painted the bridge grey?", "bridge#2", "Paul Hogan painted the bridge grey in 1988."),
    ("es-001", "es", "¿Qué profundidad tiene el Lago Azul?", "lago#0", "El Lago Azul tiene 251 metros de profundidad."),
    ("es-002", "es", "¿Cuándo se congela el lago?", "lago#1", "El lago se congela cada invierno desde diciembre."),
    ("es-003", "es", "¿A qué hora sale el tren del norte?", "tren#0", "El tren sale a las ocho de la mañana."),
    ("es-004", "es", "¿Cuánto cuesta el viaje en tren?", "tren#1", "El viaje cuesta 40 euros y dura cinco horas."),
]


def write_suite(root: Path, *, extra_cases: list[dict[str, object]] | None = None) -> Path:
    """Write the suite into ``root`` (suite.toml, corpus/corpus.jsonl, cases/cases.jsonl)."""
    (root / "corpus").mkdir(parents=True, exist_ok=True)
    (root / "cases").mkdir(parents=True, exist_ok=True)
    (root / "suite.toml").write_text('[suite]\nname = "judge-data-tiny"\nmode = "retrieval"\n'
                                     'cases = ["cases/*.jsonl"]\ncorpus = "corpus/corpus.jsonl"\nk = 2\n',
                                     encoding="utf-8")
    corpus = [{"id": f"{doc}#{i}", "doc": doc, "title": title, "text": text, "lang": lang}
              for doc, lang, title, chunks in DOCS for i, text in enumerate(chunks)]
    cases: list[dict[str, object]] = [{"id": cid, "lang": lang, "question": q, "relevant": [rel], "answers": [a]}
                                      for cid, lang, q, rel, a in CASES]
    cases += extra_cases or []
    (root / "corpus" / "corpus.jsonl").write_text("".join(json.dumps(c, ensure_ascii=False) + "\n" for c in corpus),
                                                 encoding="utf-8")
    (root / "cases" / "cases.jsonl").write_text("".join(json.dumps(c, ensure_ascii=False) + "\n" for c in cases),
                                               encoding="utf-8")
    return root


def tiny_classifier(path: Path) -> Path:
    """A tiny random two-label BERT cross-encoder (the base checkpoint train-judge fine-tunes)."""
    import torch
    from transformers import BertForSequenceClassification

    from tests.helpers.tiny_models import _bert_config, tokenizer

    tok = tokenizer(path)
    torch.manual_seed(0)
    BertForSequenceClassification(_bert_config(tok.vocab_size, num_labels=2)).save_pretrained(path)
    return path


def contradict(prompt: str) -> str:
    """A scripted generator (``py:tests.helpers.judge_suite:contradict``) for contradictory answers:
    the lighthouse question gets its gold answer back and the Lago Azul one an empty reply (both
    must be dropped); the others a negated statement after an ``Answer:`` prefix and a second
    paragraph (both cut)."""
    question = prompt.rsplit("Question: ", 1)[1].split("\n", 1)[0]
    if "lighthouse" in question:
        return "The lighthouse is 35 metres tall."
    if "Lago" in question:
        return "  "
    return f"Answer: It is not true that {question.rstrip('?').lower()}.\n\nA second paragraph."
