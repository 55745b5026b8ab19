"""Training data for ARES's three fine-tuned judges, from a suite (ARES §3.2).

A suite already holds what ARES generates synthetically: questions, their gold passages (the
``relevant`` ids, inline passages in oracle mode, corpus chunks in retrieval mode) and reference
answers. :func:`build` turns every case with a gold passage and a reference answer into labelled
pairs for each judge:

==================== ================ ===========================================================
judge                input pair       rows (``kind``)
==================== ================ ===========================================================
context_relevance    question,        positive: ``gold_passage``, ``other_relevant`` (the case's
                     passage          other relevant passages); weak: ``other_question_passage``
                                      (the gold passage of another question); strong:
                                      ``same_document`` (a passage of the gold passage's
                                      document), else ``bm25_neighbour`` (one of BM25's top 10
                                      for the question), as in ARES
answer_faithfulness  passage, answer  positive: ``gold_answer``, ``framed`` / ``extractive``
                                      (faithful rewrites, judges/perturb.py); weak:
                                      ``other_answer`` (another question's answer),
                                      ``perturb_added_sentence``; strong: ``perturb_number``,
                                      ``perturb_date``, ``perturb_entity``, ``perturb_negation``,
                                      ``perturb_comparison``, ``perturb_roles``,
                                      ``perturb_added_clause`` (rule-based contradictions) and,
                                      with a generator model, ``generated_contradiction``
answer_relevance     question, answer positive: ``gold_answer``, ``framed``; weak:
                                      ``other_answer``; strong: ``neighbour_answer`` (the answer
                                      of a question whose gold passage shares the document or is
                                      a BM25 neighbour: on topic, but not an answer)
==================== ================ ===========================================================

The answer-relevance judge sees no passage, so a contradiction of the passage is not a negative
for it (it would be a label it cannot learn); contradictions train the faithfulness judge.

Rows are split by case (``dev`` for about ``dev_share`` of the cases, by a hash of the seed and the
case id: stable when cases are added) and balanced per judge and split: the larger class is cut to
the size of the smaller, taking rows of every kind in turn so that each kind stays. A negative
whose pair equals a positive pair of the same judge (two cases with the same question, a passage
listed twice) is dropped and counted. Everything is a pure function of the suite and the seed.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..suites.model import Case, Passage, Suite
from .citing import passage_text

SCHEMA = "pytest-mirage/judge-data/1"
DATA_FILE = "data.jsonl"
MANIFEST_FILE = "manifest.json"
JUDGES = ("context_relevance", "answer_faithfulness", "answer_relevance")
METRIC = {j: f"ares_{j}" for j in JUDGES}  # the ARES metric each judge produces
DEFAULT_DEV_SHARE = 0.2
BM25_TOP = 10  # ARES samples strong context negatives from BM25's top 10
POSITIVE = "positive"
WEAK = "weak"
STRONG = "strong"


@dataclass(frozen=True, slots=True)
class Row:
    """One labelled pair: ``text_a``/``text_b`` are what the judge's cross-encoder reads
    (question/passage, passage/answer or question/answer); ``label`` 1 yes, 0 no; ``kind`` how it
    was made; ``strength`` positive, weak or strong."""

    id: str
    judge: str
    label: int
    kind: str
    strength: str
    lang: str
    case: str
    split: str
    text_a: str
    text_b: str
    detail: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "judge": self.judge, "label": self.label, "kind": self.kind,
                "strength": self.strength, "lang": self.lang, "case": self.case, "split": self.split,
                "text_a": self.text_a, "text_b": self.text_b, "detail": self.detail}


@dataclass(frozen=True, slots=True)
class Gold:
    case: Case
    passage: Passage
    others: tuple[Passage, ...]  # the case's other relevant passages
    answer: str


@dataclass
class Dataset:
    """What :func:`build` made: the rows (in a fixed order) and the counts for the manifest."""

    rows: list[Row]
    suite: str
    suite_hash: str
    seed: int
    dev_share: float
    skipped: Counter[str] = field(default_factory=Counter)  # cases without training data, by reason
    dropped: Counter[str] = field(default_factory=Counter)  # rows left out, by reason
    generation: dict[str, Any] = field(default_factory=dict)  # how generated contradictions were made

    def counts(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for judge in JUDGES:
            rows = [r for r in self.rows if r.judge == judge]
            out[judge] = {
                "rows": len(rows),
                "label": {str(k): v for k, v in sorted(Counter(r.label for r in rows).items())},
                "kind": dict(sorted(Counter(r.kind for r in rows).items())),
                "strength": dict(sorted(Counter(r.strength for r in rows).items())),
                "lang": dict(sorted(Counter(r.lang for r in rows).items())),
                "split": dict(sorted(Counter(r.split for r in rows).items())),
            }
        return out


# ---------------------------------------------------------------- building


def _gold(suite: Suite, case: Case, corpus: Mapping[str, Passage]) -> Gold | str:
    """The case's gold passage(s) and reference answer, or why it has none."""
    if not case.answers:
        return "no reference answer"
    inline = {p.id: p for p in case.passages}
    found = [inline.get(pid) or corpus.get(pid) for pid in case.relevant]
    passages = [p for p in found if p is not None]
    if not passages:
        return "no relevant passage with text"
    return Gold(case, passages[0], tuple(passages[1:]), case.answers[0].strip())


def _pool(suite: Suite) -> list[Passage]:
    """Every passage the suite holds (its corpus, else the cases' passages), once per id."""
    seen: dict[str, Passage] = {}
    for p in suite.corpus or ():
        seen.setdefault(p.id, p)
    for c in suite.cases:
        for p in c.passages:
            seen.setdefault(p.id, p)
    return list(seen.values())


def _split_of(seed: int, suite: str, case_ids: Sequence[str], dev_share: float) -> dict[str, str]:
    order = sorted(case_ids, key=lambda cid: hashlib.sha256(f"{seed}\0{suite}\0{cid}".encode()).hexdigest())
    n_dev = 0 if len(order) < 2 or dev_share <= 0 else max(1, min(len(order) - 1, math.ceil(dev_share * len(order))))
    dev = set(order[:n_dev])
    return {cid: "dev" if cid in dev else "train" for cid in case_ids}


def build(suite: Suite, seed: int = 0, *, dev_share: float = DEFAULT_DEV_SHARE, suite_hash: str = "",
          generated: Mapping[str, str] | None = None) -> Dataset:
    """The balanced training rows of ``suite`` for the three judges (see the module docstring).

    ``generated``: case id -> a contradictory answer a generator model wrote for it
    (:func:`contradiction_prompts`), a strong faithfulness negative ``generated_contradiction``; one
    that is empty or repeats the gold answer or a sentence of the passage is dropped and counted."""
    from . import perturb

    if not 0 <= dev_share < 1:
        raise ConfigError(f"dev_share {dev_share!r}: expected a share from 0 to below 1 (0.2 keeps a fifth of the "
                          "cases for early stopping)")
    pool = _pool(suite)
    corpus = {p.id: p for p in pool}
    skipped: Counter[str] = Counter()
    golds: list[Gold] = []
    for case in suite.cases:
        g = _gold(suite, case, corpus)
        if isinstance(g, str):
            skipped[g] += 1
        else:
            golds.append(g)
    split = _split_of(seed, suite.name, [g.case.id for g in golds], dev_share)
    by_lang: dict[str, list[Gold]] = defaultdict(list)
    for g in golds:
        by_lang[g.case.lang].append(g)
    pools: dict[str, list[Passage]] = {}
    indexes: dict[str, Any] = {}
    examples: dict[str, perturb.Example] = {
        g.case.id: perturb.Example(id=g.case.id, lang=g.case.lang, question=g.case.question,
                                   passages=(g.passage, *g.others), answer=g.answer, label=1, kind="original",
                                   relevant=(g.passage.id,))
        for g in golds}
    candidates: list[Row] = []
    for g in golds:
        lang = g.case.lang
        if lang not in pools:
            pools[lang] = [p for p in pool if p.lang in (None, lang)] or pool
        rng = random.Random(f"{seed}\0{g.case.id}")
        others = [o for o in by_lang[lang] if o.case.id != g.case.id]
        neighbours = _neighbours(g, pools[lang], indexes, rng)
        candidates.extend(_context_rows(g, others, pools[lang], neighbours, rng, split[g.case.id]))
        donors = [examples[o.case.id] for o in others]
        candidates.extend(_faithfulness_rows(g, examples[g.case.id], donors, others, rng, split[g.case.id]))
        candidates.extend(_relevance_rows(g, examples[g.case.id], others, neighbours, rng, split[g.case.id]))
    generated_drops: Counter[str] = Counter()
    for g in golds:
        if generated is not None and g.case.id in generated:
            text = clean_generated(generated[g.case.id])
            why = _generated_problem(text, g)
            if why is not None:
                generated_drops[f"generated contradiction: {why}"] += 1
                continue
            candidates.append(_row(g, "answer_faithfulness", 0, "generated_contradiction", STRONG,
                                   passage_text(g.passage), text, split[g.case.id]))
    rows, dropped = _clean_and_balance(candidates, seed)
    dropped.update(generated_drops)
    return Dataset(rows, suite.name, suite_hash, seed, dev_share, skipped, dropped)


# ---------------------------------------------------------------- contradictory answers from a generator

CONTRADICTION_PROMPT_VERSION = "1"
_DEMOS = 3


def gold_examples(suite: Suite) -> list[Gold]:
    """The cases with a gold passage and a reference answer, in suite order."""
    corpus = {p.id: p for p in _pool(suite)}
    return [g for g in (_gold(suite, c, corpus) for c in suite.cases) if not isinstance(g, str)]


def contradiction_prompts(suite: Suite, seed: int = 0) -> list[tuple[str, str, str]]:
    """(case id, language, prompt) asking a generator for an answer that contradicts the passage.

    ARES (§3.2, A.5) prompts its generator with few-shot demonstrations whose answers are
    contradictory. Here the demonstrations are other cases of the same language with their answer
    contradicted by rule (judges/perturb.py: a number, a date, a name or a negation changed), so the
    prompt needs nothing but the suite; the instruction names the case's language."""
    from ..text.langcodes import language_name
    from . import perturb

    golds = gold_examples(suite)
    out: list[tuple[str, str, str]] = []
    for g in golds:
        rng = random.Random(f"{seed}\0contradiction\0{g.case.id}")
        demos: list[str] = []
        others = [o for o in golds if o.case.lang == g.case.lang and o.case.id != g.case.id]
        rng.shuffle(others)
        for o in others:
            if len(demos) >= _DEMOS or o.case.lang not in perturb.LANGS:
                break
            ex = perturb.Example(id=o.case.id, lang=o.case.lang, question=o.case.question, passages=(o.passage,),
                                 answer=o.answer, label=1, kind="original", relevant=(o.passage.id,))
            for kind in ("number", "negation", "entity", "date"):
                n = perturb.perturb(ex, kind, rng, ())
                if n is not None:
                    demos.append(f"Document: {o.passage.text}\nQuestion: {o.case.question}\nAnswer: {_plain(n.answer)}")
                    break
        lang = language_name(g.case.lang)
        head = (f"Write an answer to the question that contradicts the document: it must state something the "
                f"document says is false, in one or two sentences, in {lang}. Give only the answer.")
        body = "\n\n".join([head, *demos, f"Document: {g.passage.text}\nQuestion: {g.case.question}\nAnswer:"])
        out.append((g.case.id, g.case.lang, body))
    return out


def clean_generated(text: str) -> str:
    """A generated answer without a leading ``Answer:`` and without anything after its first paragraph."""
    t = text.strip()
    if t.lower().startswith("answer:"):
        t = t[len("answer:"):].strip()
    return t.split("\n\n", 1)[0].strip()


def _generated_problem(text: str, g: Gold) -> str | None:
    from ..text.tokenize import normalize

    if not any(ch.isalnum() for ch in text):
        return "empty"
    if normalize(text).strip(" .") == normalize(g.answer).strip(" ."):
        return "same as the gold answer"
    if normalize(text).strip(" .") in normalize(g.passage.text):
        return "copied from the passage"
    return None


def _neighbours(g: Gold, pool: Sequence[Passage], indexes: dict[str, Any], rng: random.Random) -> list[Passage]:
    """BM25's top passages for the question, without the case's relevant ones, best first."""
    from ..suites.bm25 import BM25Index

    lang = g.case.lang
    if lang not in indexes:
        indexes[lang] = BM25Index(pool, lang)
    relevant = set(g.case.relevant)
    hits = indexes[lang].search(g.case.question, BM25_TOP + len(relevant))
    return [p for p, _s in hits if p.id not in relevant][:BM25_TOP]


def _row(g: Gold, judge: str, label: int, kind: str, strength: str, a: str, b: str, split: str,
         detail: str = "") -> Row:
    return Row(id=f"{judge}/{g.case.id}/{kind}", judge=judge, label=label, kind=kind, strength=strength,
               lang=g.case.lang, case=g.case.id, split=split, text_a=a, text_b=b, detail=detail)


def _context_rows(g: Gold, others: Sequence[Gold], pool: Sequence[Passage], neighbours: Sequence[Passage],
                  rng: random.Random, split: str) -> list[Row]:
    j, q = "context_relevance", g.case.question
    relevant = set(g.case.relevant)
    rows = [_row(g, j, 1, "gold_passage", POSITIVE, q, passage_text(g.passage), split, g.passage.id)]
    rows += [_row(g, j, 1, "other_relevant", POSITIVE, q, passage_text(p), split, p.id) for p in g.others]
    foreign = [o.passage for o in others if o.passage.id not in relevant]
    if foreign:
        p = rng.choice(foreign)
        rows.append(_row(g, j, 0, "other_question_passage", WEAK, q, passage_text(p), split, p.id))
    same_doc = [p for p in pool if p.doc_id == g.passage.doc_id and p.id not in relevant]
    if same_doc:
        p = rng.choice(same_doc)
        rows.append(_row(g, j, 0, "same_document", STRONG, q, passage_text(p), split, p.id))
    elif neighbours:
        p = rng.choice(list(neighbours))
        rows.append(_row(g, j, 0, "bm25_neighbour", STRONG, q, passage_text(p), split, p.id))
    return rows


def _faithfulness_rows(g: Gold, ex: Any, donors: Sequence[Any], others: Sequence[Gold], rng: random.Random,
                       split: str) -> list[Row]:
    from . import perturb

    j, premise = "answer_faithfulness", passage_text(g.passage)
    rows = [_row(g, j, 1, "gold_answer", POSITIVE, premise, g.answer, split)]
    supported = ex.lang in perturb.LANGS
    if supported:
        for kind in ("framed", "extractive"):
            p = perturb.positive(ex, kind, rng)
            if p is not None:
                rows.append(_row(g, j, 1, kind, POSITIVE, premise, _plain(p.answer), split))
    pool = [o for o in others if o.answer != g.answer and o.passage.id not in g.case.relevant]
    if pool:
        o = rng.choice(pool)
        rows.append(_row(g, j, 0, "other_answer", WEAK, premise, o.answer, split, f"answer of {o.case.id}"))
    if supported:
        for kind in ("added_sentence", *perturb.STRONG_KINDS):
            n = perturb.perturb(ex, kind, rng, donors)
            if n is not None:
                strength = WEAK if kind in perturb.WEAK_KINDS else STRONG
                rows.append(_row(g, j, 0, f"perturb_{kind}", strength, premise, _plain(n.answer), split, n.detail))
    return rows


def _relevance_rows(g: Gold, ex: Any, others: Sequence[Gold], neighbours: Sequence[Passage], rng: random.Random,
                    split: str) -> list[Row]:
    from . import perturb

    j, q = "answer_relevance", g.case.question
    rows = [_row(g, j, 1, "gold_answer", POSITIVE, q, g.answer, split)]
    if ex.lang in perturb.LANGS:
        p = perturb.positive(ex, "framed", rng)
        if p is not None:
            rows.append(_row(g, j, 1, "framed", POSITIVE, q, _plain(p.answer), split))
    pool = [o for o in others if o.answer != g.answer]
    near_ids = {p.id for p in neighbours}
    near = [o for o in pool if o.passage.doc_id == g.passage.doc_id or o.passage.id in near_ids]
    if near:
        o = rng.choice(near)
        rows.append(_row(g, j, 0, "neighbour_answer", STRONG, q, o.answer, split, f"answer of {o.case.id}"))
    rest = [o for o in pool if o not in near] or pool
    if rest:
        o = rng.choice(rest)
        rows.append(_row(g, j, 0, "other_answer", WEAK, q, o.answer, split, f"answer of {o.case.id}"))
    return rows


def _plain(answer: str) -> str:
    from ..prompts import strip_citations

    return strip_citations(answer).strip()


def _clean_and_balance(rows: Sequence[Row], seed: int) -> tuple[list[Row], Counter[str]]:
    dropped: Counter[str] = Counter()
    positives = {(r.judge, r.text_a, r.text_b) for r in rows if r.label == 1}
    seen: set[tuple[str, int, str, str]] = set()
    kept: list[Row] = []
    for r in rows:
        key = (r.judge, r.label, r.text_a, r.text_b)
        if r.label == 0 and (r.judge, r.text_a, r.text_b) in positives:
            dropped["negative equal to a positive pair"] += 1
        elif not r.text_a.strip() or not r.text_b.strip():
            dropped["empty text"] += 1
        elif key in seen:
            dropped["duplicate pair"] += 1
        else:
            seen.add(key)
            kept.append(r)
    out: list[Row] = []
    ids: Counter[str] = Counter()
    for judge in JUDGES:
        for split in ("train", "dev"):
            group = [r for r in kept if r.judge == judge and r.split == split]
            pos = [r for r in group if r.label == 1]
            neg = [r for r in group if r.label == 0]
            n = min(len(pos), len(neg))
            rng = random.Random(f"{seed}\0balance\0{judge}\0{split}")
            chosen = {id(r) for r in (*_round_robin(pos, n, rng), *_round_robin(neg, n, rng))}
            for r in group:
                if id(r) in chosen:
                    ids[r.id] += 1  # a case's second row of one kind (other_relevant): id#2
                    out.append(r if ids[r.id] == 1 else replace(r, id=f"{r.id}#{ids[r.id]}"))
                else:
                    dropped[f"balance ({judge}, label {r.label})"] += 1
    return out, dropped


def _round_robin(rows: Sequence[Row], n: int, rng: random.Random) -> list[Row]:
    """``n`` of ``rows``, taking each kind in turn (each kind's rows in a seeded order)."""
    by_kind: dict[str, list[Row]] = defaultdict(list)
    for r in rows:
        by_kind[r.kind].append(r)
    queues = []
    for kind in sorted(by_kind):
        q = list(by_kind[kind])
        rng.shuffle(q)
        queues.append(q)
    out: list[Row] = []
    while len(out) < n:
        for q in queues:
            if q and len(out) < n:
                out.append(q.pop())
    return out


# ---------------------------------------------------------------- files


def write(ds: Dataset, out_dir: Path) -> tuple[Path, Path]:
    """Write ``data.jsonl`` (one row per line, in order) and ``manifest.json`` (schema, suite and
    its content hash, seed, the data file's sha256, counts per judge / label / kind / language /
    split, skipped cases, dropped rows). The same suite and seed write the same bytes."""
    out_dir.mkdir(parents=True, exist_ok=True)
    data = "".join(json.dumps(r.to_json(), ensure_ascii=False, sort_keys=True) + "\n" for r in ds.rows).encode()
    data_path, manifest_path = out_dir / DATA_FILE, out_dir / MANIFEST_FILE
    data_path.write_bytes(data)
    from .._version import __version__

    manifest = {"schema": SCHEMA, "suite": ds.suite, "suite_hash": ds.suite_hash, "seed": ds.seed,
                "dev_share": ds.dev_share, "data_file": DATA_FILE, "data_sha256": hashlib.sha256(data).hexdigest(),
                "rows": len(ds.rows), "counts": ds.counts(), "skipped_cases": dict(sorted(ds.skipped.items())),
                "dropped_rows": dict(sorted(ds.dropped.items())), "generator": f"pytest-mirage {__version__}",
                "contradictions": ds.generation or None}
    manifest_path.write_text(json.dumps(manifest, ensure_ascii=False, indent=2, sort_keys=True) + "\n",
                             encoding="utf-8")
    return data_path, manifest_path


_ROW_KEYS = {"id": str, "judge": str, "label": int, "kind": str, "strength": str, "lang": str, "case": str,
             "split": str, "text_a": str, "text_b": str, "detail": str}


def load(data_dir: Path) -> tuple[dict[str, Any], list[Row]]:
    """The manifest and rows of a dataset written by :func:`write`, validated: the schema, the data
    file's hash (an edited file is an error, since trained judges record it) and every row's fields."""
    manifest_path = data_dir / MANIFEST_FILE
    if not manifest_path.is_file():
        raise ConfigError(f"{manifest_path}: no judge-data manifest; write the dataset with: "
                          "python -m pytest_mirage make-judge-data SUITE --out DIR")
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{manifest_path}: not readable JSON ({exc})") from None
    if not isinstance(manifest, dict) or manifest.get("schema") != SCHEMA:
        found = manifest.get("schema") if isinstance(manifest, dict) else manifest
        raise ConfigError(f"{manifest_path}: field 'schema' is {found!r}, expected {SCHEMA!r}; rewrite the dataset "
                          "with make-judge-data")
    data_path = data_dir / str(manifest.get("data_file", DATA_FILE))
    try:
        data = data_path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"{data_path}: cannot read the judge data ({exc})") from None
    digest = hashlib.sha256(data).hexdigest()
    if digest != manifest.get("data_sha256"):
        raise ConfigError(f"{data_path}: sha256 {digest[:12]}… differs from the manifest's data_sha256 "
                          f"{str(manifest.get('data_sha256'))[:12]}…: the file was edited or belongs to another "
                          "dataset; rewrite it with make-judge-data")
    rows = list(_rows(data_path, data.decode("utf-8").splitlines()))
    return manifest, rows


def _rows(path: Path, lines: Iterable[str]) -> Iterable[Row]:
    for n, line in enumerate(lines, start=1):
        try:
            obj = json.loads(line)
        except ValueError as exc:
            raise ConfigError(f"{path}:{n}: not a JSON object ({exc})") from None
        if not isinstance(obj, dict):
            raise ConfigError(f"{path}:{n}: expected a JSON object, found {type(obj).__name__}")
        for key, typ in _ROW_KEYS.items():
            if not isinstance(obj.get(key), typ) or isinstance(obj.get(key), bool):
                raise ConfigError(f"{path}:{n}: field {key!r} is {obj.get(key)!r:.60}, expected a {typ.__name__}")
        if obj["judge"] not in JUDGES or obj["label"] not in (0, 1) or obj["split"] not in ("train", "dev"):
            raise ConfigError(f"{path}:{n}: judge {obj['judge']!r}, label {obj['label']!r}, split {obj['split']!r}: "
                              f"expected a judge of {', '.join(JUDGES)}, label 0 or 1, split train or dev")
        yield Row(**{k: obj[k] for k in _ROW_KEYS})


def data_hash(manifest: Mapping[str, Any]) -> str:
    """The dataset's identity: its data file's sha256 (recorded with every judge trained on it)."""
    return str(manifest["data_sha256"])
