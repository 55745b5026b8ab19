"""Command line: ``python -m pytest_mirage {new-suite,make-runs,self-check,merge,merge-cache,generate-suite,
make-judge-data,train-judge}``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from .errors import MirageError


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pytest_mirage", description=__doc__)
    sub = parser.add_subparsers(dest="cmd", required=True)
    p_new = sub.add_parser("new-suite", help="write a valid suite skeleton with comments")
    p_new.add_argument("path", type=Path)
    p_new.add_argument("--mode", default="oracle", choices=["oracle", "retrieval"])
    p_runs = sub.add_parser("make-runs", help="(re)write a suite's reference runs/ from offline models")
    p_runs.add_argument("suite", help="suite folder or bundled suite name")
    p_runs.add_argument("--model", action="append", default=None,
                        help="model spec to record (default: extractive)")
    p_runs.add_argument("--mirage-trusted-path", dest="trusted", action="append", default=[],
                        metavar="DIR", help="a folder outside the suite folder that its [source] may read (repeatable)")
    p_chk = sub.add_parser("self-check", help="check that a suite ranks control:oracle first and each "
                           "broken control last on the metric it breaks")
    p_chk.add_argument("suite", help="suite folder or bundled suite name")
    p_chk.add_argument("--mirage-trusted-path", dest="trusted", action="append", default=[],
                       metavar="DIR", help="a folder outside the suite folder that its [source] may read (repeatable)")
    p_merge = sub.add_parser("merge", help="merge the partial reports of a sharded run (--mirage-shard K/N) into "
                             "the report one run would have written; exit status as that run's")
    p_merge.add_argument("partials", nargs="+", type=Path, metavar="PARTIAL", help="every shard's partial report")
    from .finish.merge import MERGE_FLAGS

    for flag in MERGE_FLAGS:
        p_merge.add_argument(flag, dest=flag, default=None, metavar="VALUE",
                             help="as in a pytest run (outputs; the shards' cache settings otherwise)")
    p_merge.add_argument("--junitxml", "--junit-xml", dest="junitxml", type=Path, default=None, metavar="PATH",
                         help="write the run's JUnit XML (case items and gates), as pytest's --junitxml in one run")
    p_merge.add_argument("-p", "--plugin", dest="plugins", action="append", default=[], metavar="MODULE",
                         help="a module or .py file (e.g. the shards' conftest.py) whose pytest_mirage_register_metrics"
                         "/_models hooks register the metrics and models the shards used (repeatable)")
    p_cache = sub.add_parser("merge-cache", help="merge the answer caches of a sharded run's jobs into one cache "
                             "folder for the next run")
    p_cache.add_argument("out", type=Path, metavar="OUT", help="the cache folder to write (as --mirage-cache)")
    p_cache.add_argument("caches", nargs="+", type=Path, metavar="CACHE", help="every shard's --mirage-cache folder")
    p_gen = sub.add_parser("generate-suite", help="generate a retrieval suite from a corpus (ARES-style questions and "
                           "answers, filtered), with a review sheet; --accepted SHEET keeps the accepted cases")
    from .cli.generate import add_arguments as add_generate_arguments

    add_generate_arguments(p_gen)
    _add_judge_training(sub)
    args = parser.parse_args(argv)
    if args.cmd == "merge":
        return _merge(args)
    if args.cmd in ("make-judge-data", "train-judge"):
        return _judge_training(args)
    if args.cmd == "merge-cache":
        from .engine.cache import merge_caches

        try:
            for line in merge_caches(args.out, args.caches):
                print(line)
        except MirageError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        return 0
    try:
        if args.cmd in ("make-runs", "self-check"):  # checked as the plugin checks them: each must exist
            from .config.options import Raw
            from .config.settings import parse_trusted_paths

            args.trusted = parse_trusted_paths(Raw(args.trusted, "--mirage-trusted-path"), None)
        if args.cmd == "new-suite":
            from .cli.scaffold import new_suite

            for p in new_suite(args.path, mode=args.mode):
                print(f"wrote {p}")
            print(f"next: edit the files, then run: pytest {args.path}")
        elif args.cmd == "make-runs":
            from .cli.refruns import make_runs

            written = make_runs(args.suite, args.model or ["extractive"], trusted=args.trusted)
            for p in written:
                print(f"wrote {p}")
            from .suites.resolve import load_ref, suite_ref

            listed = set(load_ref(suite_ref(args.suite, Path.cwd()), args.trusted).run_files)
            for p in written:
                if p not in listed:
                    print(f"note: {p} is not matched by the manifest's runs = [...]; add "
                          f'runs = ["runs/*.jsonl"] to the [suite] table so the leaderboard shows it', file=sys.stderr)
        elif args.cmd == "generate-suite":
            from .cli.generate import run as generate

            return generate(args)
        elif args.cmd == "self-check":
            from .cli.selfcheck import self_check
            from .suites.resolve import load_ref, suite_ref

            result = self_check(load_ref(suite_ref(args.suite, Path.cwd()), args.trusted))
            for problem in result.problems:
                print(f"FAIL {result.suite} {problem}")
            print(f"self-check {result.suite}: {'ok' if result.ok else f'{len(result.problems)} problems'}")
            return 0 if result.ok else 1
    except MirageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


def _add_judge_training(sub: Any) -> None:
    """ARES's fine-tuned judges (issue 22): judge data from a suite, then one cross-encoder per judge."""
    p_data = sub.add_parser("make-judge-data", help="write ARES judge training data (positives, weak and strong "
                            "negatives, balanced per judge) from a suite's questions, gold passages and answers")
    p_data.add_argument("suite", help="suite folder or bundled suite name")
    p_data.add_argument("--out", type=Path, required=True, help="folder for data.jsonl and manifest.json")
    p_data.add_argument("--seed", type=int, default=0)
    p_data.add_argument("--dev-share", type=float, default=None,
                        help="share of the cases held out for early stopping (default 0.2)")
    p_data.add_argument("--generator", default=None, metavar="MODEL_SPEC",
                        help="also ask this model (openai:, vllm:, hf:, py:) for one contradictory answer per case "
                             "(ARES's few-shot prompt), through the engine")
    p_data.add_argument("--cache", type=Path, default=None, help="answer cache folder for --generator (a rerun "
                        "makes no call)")
    p_data.add_argument("--cache-mode", default="use", choices=["use", "refresh", "off", "replay-only"])
    p_train = sub.add_parser("train-judge", help="fine-tune a cross-encoder per ARES judge on make-judge-data's "
                             "output; load the result with --mirage-judges ares=classifier:OUT")
    p_train.add_argument("data", type=Path, help="folder written by make-judge-data")
    p_train.add_argument("--model", required=True, help="AutoModelForSequenceClassification checkpoint (name or path)")
    p_train.add_argument("--out", type=Path, required=True, help="folder for the judges (one subfolder each)")
    p_train.add_argument("--judges", default="all",
                         help="all, or a comma-separated list of context_relevance, answer_faithfulness, "
                              "answer_relevance")
    p_train.add_argument("--seed", type=int, default=0)
    p_train.add_argument("--epochs", type=int, default=10)
    p_train.add_argument("--patience", type=int, default=3, help="epochs without a better dev loss before stopping")
    p_train.add_argument("--batch-size", type=int, default=16)
    p_train.add_argument("--learning-rate", type=float, default=2e-5)
    p_train.add_argument("--max-length", type=int, default=256)
    p_train.add_argument("--max-steps", type=int, default=None, help="stop after this many optimizer steps")
    p_train.add_argument("--device", default="auto", help="auto (GPU when present), cpu, cuda, cuda:N or mps")


def _judge_training(args: argparse.Namespace) -> int:
    try:
        if args.cmd == "make-judge-data":
            from .cli.train_judge import make_judge_data

            data, manifest, counts = make_judge_data(args.suite, args.out, seed=args.seed, dev_share=args.dev_share,
                                                     generator=args.generator, cache=args.cache,
                                                     cache_mode=args.cache_mode)
            for judge, c in counts.items():
                print(f"{judge}: {c['rows']} rows (label 0/1: {c['label'].get('0', 0)}/{c['label'].get('1', 0)}; "
                      f"dev {c['split'].get('dev', 0)})")
            print(f"wrote {data}")
            print(f"wrote {manifest}")
            return 0
        from .cli.train_judge import parse_judges, train_judges
        from .judges.ares_train import TrainSettings

        settings = TrainSettings(epochs=args.epochs, patience=args.patience, batch_size=args.batch_size,
                                 learning_rate=args.learning_rate, max_length=args.max_length,
                                 max_steps=args.max_steps, seed=args.seed, device=args.device)
        cards = train_judges(args.data, args.model, args.out, settings, parse_judges(args.judges),
                             progress=lambda line: print(line, file=sys.stderr))
        for judge, card in cards.items():
            dev = card["dev"]["overall"]
            auc = "n/a" if dev["roc_auc"] is None else f"{dev['roc_auc']:.3f}"
            print(f"{judge}: dev accuracy {dev['accuracy']:.3f}, ROC AUC {auc} ({dev['n']} rows, best epoch "
                  f"{card['best_epoch']} of {card['epochs_run']}) -> {args.out / judge}")
        print(f"use: --mirage-judges ares=classifier:{args.out}")
        return 0
    except MirageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


def _merge(args: argparse.Namespace) -> int:
    import shutil

    from .finish.merge import MERGE_FLAGS, merge, summary_lines
    from .report.sanitize import terminal_safe

    overrides = {flag: getattr(args, flag) for flag in MERGE_FLAGS if getattr(args, flag) is not None}
    try:
        merged = merge(args.partials, overrides, progress=sys.stderr.isatty(), junitxml=args.junitxml,
                       plugins=args.plugins)
    except MirageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 4  # as pytest's usage error
    width = shutil.get_terminal_size().columns if sys.stdout.isatty() else None
    for line, _is_error in summary_lines(merged, width):
        print(terminal_safe(line))  # errors too: one stream keeps the order in a CI log
    for line in merged.annotations:  # workflow commands: at the start of a line, as they are
        print(line)
    return merged.exitstatus


if __name__ == "__main__":
    sys.exit(main())
