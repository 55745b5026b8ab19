"""Build small suites and engine requests in memory (no files) for engine and adapter tests."""

from __future__ import annotations

from pathlib import Path

from pytest_mirage.models.base import ModelRequest
from pytest_mirage.prompts import load_template, order_passages, render
from pytest_mirage.suites.model import Case, Passage, Suite

LANGS = ("en", "de", "sw", "th", "km")


FILLER = ("Berlin ist die Hauptstadt Deutschlands. Nairobi ni mji mkuu wa Kenya. "
          "กรุงเทพมหานครเป็นเมืองหลวงของประเทศไทย ភ្នំពេញជារាជធានីនៃកម្ពុជា The river floods in spring. ")


def make_suite(n: int, name: str = "engine-suite", passages_per_case: int = 3, passage_chars: int = 0) -> Suite:
    """A suite of ``n`` oracle-mode cases with distinct questions ``question q-<i> ...``.

    Passages are one short sentence, or about ``passage_chars`` characters of multilingual text
    (MIRACL passages are a few hundred characters) when that is set.
    """
    cases = []
    for i in range(n):
        lang = LANGS[i % len(LANGS)]
        passages = tuple(Passage(id=f"doc{i}#{j}", title=f"Title {i}",
                                 text=_text(f"Passage {j} about topic {i}.", passage_chars))
                         for j in range(passages_per_case))
        cases.append(Case(suite=name, id=f"q-{i}", lang=lang, question=f"question q-{i}: what is topic {i}?",
                          passages=passages, relevant=(f"doc{i}#0",), answers=(f"topic {i}",),
                          source=f"cases.jsonl:{i + 1}"))
    return Suite(name=name, root=Path("."), manifest=None, mode="oracle", cases=tuple(cases))


def _text(head: str, chars: int) -> str:
    if chars <= len(head):
        return head
    body = (FILLER * (chars // len(FILLER) + 1))[: chars - len(head) - 1]
    return f"{head} {body}"


def make_requests(n: int, name: str = "engine-suite", passages_per_case: int = 3,
                  passage_chars: int = 0) -> list[ModelRequest]:
    """One request per case of :func:`make_suite`, with the MIRAGE prompt rendered as the plugin does."""
    suite = make_suite(n, name, passages_per_case, passage_chars)
    template = load_template("mirage")
    out = []
    for case in suite.cases:
        passages = tuple(order_passages(case))
        out.append(ModelRequest(case=case, suite=suite, mode="oracle", passages=passages,
                                prompt=render(template, case, passages)))
    return out
