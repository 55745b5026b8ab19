"""Per-language counts of the MIRACL v1.0 dev topics and qrels (recorded in docs/miracl-counts.md).

    python benchmarks/miracl_counts.py                      # ../shared/data/miracl-v1.0-dev
    python benchmarks/miracl_counts.py DIR --split dev      # another folder or split
    python benchmarks/miracl_counts.py --markdown           # the table as in docs/miracl-counts.md
    python benchmarks/miracl_counts.py --check              # a suite loaded from the files has these counts

The files are read with the loader's own parsers (``pytest_mirage.suites.sources``), so the table is
what a ``miracl:DIR?lang=..`` suite sees before the corpus is attached: one case per query with a
relevant passage, its judged passages (relevant and non-relevant) as the oracle context.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from pytest_mirage.suites.problems import Problems
from pytest_mirage.suites.sources import load_source_spec, miracl_file, read_qrels, read_topics
from pytest_mirage.text.langcodes import MIRAGE_LANGUAGES

# the repository's sibling folder "shared" (../shared/data next to the checkout); else pass the folder
DEFAULT_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "miracl-v1.0-dev"


@dataclass(frozen=True, slots=True)
class LangCounts:
    lang: str
    queries: int  # topics in the file
    usable: int  # queries with at least one relevant passage (the cases of a suite)
    with_negative: int  # usable queries that also have a non-relevant passage (MIRAGE keeps only these)
    judged: int  # judged (query, passage) pairs
    relevant: int
    non_relevant: int
    max_judged: int  # most judged passages of one query

    def per_query(self, n: int) -> float:
        return n / self.queries if self.queries else 0.0


def count(directory: Path, lang: str, split: str) -> LangCounts:
    problems = Problems()
    topics_path = miracl_file(directory, "topics", lang, split)
    qrels_path = miracl_file(directory, "qrels", lang, split)
    if topics_path is None or qrels_path is None:
        raise SystemExit(f"{directory}: no topics/qrels files for {lang!r} ({split}); "
                         f"expected topics.miracl-v1.0-{lang}-{split}.tsv and qrels.miracl-v1.0-{lang}-{split}.tsv")
    topics = read_topics(topics_path, problems)
    qrels = read_qrels(qrels_path, problems)
    problems.raise_if_any()
    per_query = [list(qrels.get(q, {}).values()) for q in topics]
    rel = sum(1 for js in per_query for j in js if j.rel > 0)
    judged = sum(len(js) for js in per_query)
    usable = [js for js in per_query if any(j.rel > 0 for j in js)]
    return LangCounts(lang=lang, queries=len(topics), usable=len(usable),
                      with_negative=sum(1 for js in usable if any(j.rel <= 0 for j in js)), judged=judged, relevant=rel, non_relevant=judged - rel,
                      max_judged=max((len(js) for js in per_query), default=0))


def check(directory: Path, lang: str, split: str) -> list[str]:
    """Load ``miracl:DIR?lang=..`` (with a synthetic corpus of every judged docid) and compare its cases,
    passages and relevant ids with the counts read directly from the files; returns the differences."""
    topics: list[str] = []
    with (directory / f"topics.miracl-v1.0-{lang}-{split}.tsv").open(encoding="utf-8") as fh:
        topics = [line.split("\t", 1)[0] for line in fh if line.strip()]
    qrels: dict[str, dict[str, int]] = {}
    with (directory / f"qrels.miracl-v1.0-{lang}-{split}.tsv").open(encoding="utf-8") as fh:
        for line in fh:
            qid, _, docid, rel = line.split()
            qrels.setdefault(qid, {})[docid] = int(rel)
    usable = [q for q in topics if any(r > 0 for r in qrels.get(q, {}).values())]
    with tempfile.TemporaryDirectory() as tmp:
        corpus = Path(tmp) / "corpus.jsonl"
        with corpus.open("w", encoding="utf-8") as fh:
            for docid in sorted({d for js in qrels.values() for d in js}):
                fh.write(json.dumps({"docid": docid, "title": "t", "text": f"passage {docid}"}) + "\n")
        suite = load_source_spec(f"miracl:{directory}?lang={lang}&split={split}&corpus={corpus}")
    found = {
        "cases": (len(suite.cases), len(usable)),
        "case ids": (sorted(c.id for c in suite.cases), sorted(usable)),
        "passages": (sum(len(c.passages) for c in suite.cases), sum(len(qrels[q]) for q in usable)),
        "relevant": (sum(len(c.relevant) for c in suite.cases),
                     sum(r > 0 for q in usable for r in qrels[q].values())),
    }
    return [f"{lang}: {what}: suite {a if what != 'case ids' else '...'} != files "
            f"{b if what != 'case ids' else '...'}" for what, (a, b) in found.items() if a != b]


def table(rows: list[LangCounts]) -> list[str]:
    out = ["| lang | dev queries | with a relevant passage | and a non-relevant one | judged passages | relevant | non-relevant "
           "| judged / query | relevant / query | non-relevant / query | max judged |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        out.append(f"| {r.lang} | {r.queries} | {r.usable} | {r.with_negative} | {r.judged} | {r.relevant} | {r.non_relevant} "
                   f"| {r.per_query(r.judged):.2f} | {r.per_query(r.relevant):.2f} "
                   f"| {r.per_query(r.non_relevant):.2f} | {r.max_judged} |")
    tot = LangCounts("all", sum(r.queries for r in rows), sum(r.usable for r in rows),
                     sum(r.with_negative for r in rows), sum(r.judged for r in rows),
                     sum(r.relevant for r in rows), sum(r.non_relevant for r in rows),
                     max((r.max_judged for r in rows), default=0))
    out.append(f"| **all** | {tot.queries} | {tot.usable} | {tot.with_negative} | {tot.judged} | {tot.relevant} | {tot.non_relevant} "
               f"| {tot.per_query(tot.judged):.2f} | {tot.per_query(tot.relevant):.2f} "
               f"| {tot.per_query(tot.non_relevant):.2f} | {tot.max_judged} |")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir", nargs="?", type=Path, default=DEFAULT_DIR)
    ap.add_argument("--split", default="dev")
    ap.add_argument("--langs", default=",".join(MIRAGE_LANGUAGES))
    ap.add_argument("--markdown", action="store_true", help="print only the Markdown table")
    ap.add_argument("--check", action="store_true",
                    help="load each language as a suite and compare its counts with the files")
    args = ap.parse_args(argv)
    if not args.dir.is_dir():
        print(f"{args.dir}: not a folder; pass the folder with the MIRACL topics and qrels files", file=sys.stderr)
        return 2
    if args.check:
        diffs = [d for lang in args.langs.split(",") for d in check(args.dir, lang, args.split)]
        print("\n".join(diffs) or f"ok: {args.langs}: cases, passages and relevant ids match the files")
        return 1 if diffs else 0
    rows = [count(args.dir, lang, args.split) for lang in args.langs.split(",")]
    if not args.markdown:
        print(f"MIRACL v1.0 {args.split} from {args.dir}")
        print(f"median judged passages per query over languages: "
              f"{statistics.median(r.per_query(r.judged) for r in rows):.2f}")
    print("\n".join(table(rows)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
