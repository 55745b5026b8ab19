"""--mirage-shard K/N and ``python -m pytest_mirage merge``: the partition, the partial report, the
merge's checks, and exactness (N shards merged write the bytes of one run)."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from pytest_mirage.__main__ import main
from pytest_mirage.config.options import Raw, RawOptions
from pytest_mirage.config.settings import parse_shard, resolve, settings_hash
from pytest_mirage.errors import ConfigError
from pytest_mirage.evaluate.context import partition

LANGS = ("en", "fr")
N_CASES = 13  # per language: an odd count, so shards cannot all be the same size
QUALITY = {"sys-a": 0.9, "sys-b": 0.6, "sys-c": 0.3}


def _u(*parts: str) -> float:
    return int.from_bytes(hashlib.sha256("/".join(parts).encode()).digest()[:8], "big") / 2**64


def _ids() -> list[str]:
    return [f"{lang}-{i:03d}" for lang in LANGS for i in range(N_CASES)]


def write_suite(root: Path) -> Path:
    d = root / "shardy"
    (d / "cases").mkdir(parents=True)
    (d / "suite.toml").write_text(
        '[suite]\nname = "shardy"\nmode = "oracle"\ncases = ["cases/*.jsonl"]\n\n'
        '[thresholds]\n"citation_recall" = ">= 0.5"\n\n'
        '[gates]\n"citation_recall.mean" = ">= 0.5"\n"citation_recall.mean@fr" = ">= 0.2"\n')
    for lang in LANGS:
        lines = []
        for i in range(N_CASES):
            cid = f"{lang}-{i:03d}"
            passages = [{"id": f"{cid}#0", "title": f"Town {i}", "text": f"Town {i} was founded in {1200 + 7 * i}."},
                        {"id": f"{cid}#1", "title": f"Town {i}", "text": f"Town {i} hosts a music festival."}]
            lines.append(json.dumps({"id": cid, "lang": lang, "question": f"When was town {i} founded?",
                                     "passages": passages, "relevant": [f"{cid}#0"],
                                     "answers": [f"Town {i} was founded in {1200 + 7 * i}."]}))
        (d / "cases" / f"{lang}.jsonl").write_text("\n".join(lines) + "\n")
    return d


def write_run(root: Path, model: str, quality: float, tag: str) -> Path:
    path = root / f"runs-{tag}" / f"{model}.jsonl"
    path.parent.mkdir(exist_ok=True)
    out = []
    for cid in _ids():
        i = int(cid.split("-")[1])
        if _u(tag, model, cid) < quality:
            text, pid = f"Town {i} was founded in {1200 + 7 * i}.", f"{cid}#0"
        else:
            text, pid = f"Town {i} hosts a music festival.", f"{cid}#1"
        out.append(json.dumps({"case_id": cid, "model": model, "output": f"##Reason: {text} [{pid}]\n##Answer: {text} [{pid}]"}))
    path.write_text("\n".join(out) + "\n")
    return path


def write_battles(root: Path) -> Path:
    rows = []
    models = list(QUALITY)
    for cid in _ids():
        good = {m: _u("new", m, cid) < QUALITY[m] for m in models}
        for x, a in enumerate(models):
            for b in models[x + 1:]:
                verdict = "Tie" if good[a] == good[b] or _u("tie", a, b, cid) < 0.1 else ("A" if good[a] else "B")
                rows.append({"query_id": cid, "model_A": a, "model_B": b, "verdict": verdict})
    path = root / "battles.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def models(root: Path, tag: str) -> list[str]:
    return [f"--mirage-model=replay:{write_run(root, m, q if tag == 'new' else min(1.0, q + 0.2), tag)}"
            for m, q in QUALITY.items()]


# ---------------------------------------------------------------------------------------------- partition
def test_partition_is_disjoint_complete_balanced_and_order_free() -> None:
    keys = [(lang, f"{lang}-{i}", r) for lang in ("en", "hi", "sw") for i in range({"en": 17, "hi": 5, "sw": 1}[lang])
            for r in range(2)]
    for n in (1, 2, 3, 5, 8):
        shards = partition("s", keys, n)
        assert set(shards) == {(cid, r) for _lang, cid, r in keys} and set(shards.values()) <= set(range(1, n + 1))
        for lang in ("en", "hi", "sw"):
            sizes = Counter(shards[(cid, r)] for la, cid, r in keys if la == lang)
            counts = [sizes.get(k, 0) for k in range(1, n + 1)]
            assert max(counts) - min(counts) <= 1, (n, lang, counts)
        assert partition("s", list(reversed(keys)), n) == shards  # depends on the names only
    # another suite name deals the same cases differently (the hash includes the suite)
    assert partition("s", keys, 3) != partition("t", keys, 3)


def test_shard_values_are_checked() -> None:
    assert parse_shard(Raw("2/4", "--mirage-shard")) == (2, 4)
    assert parse_shard(Raw(None, "default")) is None
    for bad in ("0/3", "4/3", "3", "a/b", "1/0", "-1/2", "1/2/3"):
        with pytest.raises(ConfigError, match=r"--mirage-shard: found .*expected K/N with 1 <= K <= N"):
            parse_shard(Raw(bad, "--mirage-shard"))


def test_resolve_from_stored_options_equals_resolve_from_pytest(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nmirage_gates =\n    citation_recall.mean >= 0.4\nmirage_seed = 7\n")
    config = pytester.parseconfig("--mirage-model=extractive", "--mirage-gate=rouge_l.mean >= 0.1",
                                  "--mirage-lang=en,hi", "--mirage-shard=1/2", "--mirage-report=p.json")
    raw = RawOptions.of_config(config)
    again = RawOptions.from_json(json.loads(json.dumps(raw.to_json())), "options")
    assert resolve(again) == resolve(config) == resolve(raw)
    assert resolve(config).shard == (1, 2) and resolve(config).source("seed").startswith("mirage_seed in ")
    # outputs and the shard itself may differ between shards; what is computed may not
    other = raw.replaced({"--mirage-shard": "2/2", "--mirage-report": "q.json"})
    assert settings_hash(other) == settings_hash(raw)
    assert settings_hash(raw.replaced({"--mirage-lang": "en"})) != settings_hash(raw)
    with pytest.raises(ValueError, match=r"options.cli.--mirage-nope: not an option"):
        RawOptions.from_json({"cli": {"--mirage-nope": {"value": 1, "source": "x"}}}, "options")


def test_a_shard_needs_a_partial_report_path_and_a_valid_value(pytester: pytest.Pytester) -> None:
    write_suite(pytester.path)
    res = pytester.runpytest("shardy", "--mirage-model=extractive", "--mirage-shard=2/3")
    assert res.ret == pytest.ExitCode.USAGE_ERROR
    res.stderr.fnmatch_lines(["*--mirage-shard 2/3: a shard writes its partial report to --mirage-report PATH*"])
    res = pytester.runpytest("shardy", "--mirage-model=extractive", "--mirage-shard=4/3", "--mirage-report=p.json")
    assert res.ret == pytest.ExitCode.USAGE_ERROR
    res.stderr.fnmatch_lines(["*--mirage-shard: found '4/3'; expected K/N with 1 <= K <= N*"])


# ---------------------------------------------------------------------------------------------- shard runs
def _shard(pytester: pytest.Pytester, k: int, n: int, args: list[str], *extra: str) -> tuple[Path, Any]:
    out = pytester.path / f"part-{k}-of-{n}.json"
    res = pytester.runpytest(*args, f"--mirage-shard={k}/{n}", f"--mirage-report={out}", *extra)
    return out, res


def test_a_shard_writes_a_partial_evaluates_no_gate_and_fails_on_its_thresholds(pytester: pytest.Pytester) -> None:
    write_suite(pytester.path)
    args = ["shardy", *models(pytester.path, "new"), "--mirage-markdown=shard.md"]
    out, res = _shard(pytester, 1, 2, args)
    res.stdout.fnmatch_lines(["mirage: shard 1/2: * case result(s) written to the partial report *part-1-of-2.json; "
                              "session-level gates, arena, baseline comparison and reports are not evaluated in a "
                              "shard*(--mirage-markdown shard.md: written by the merge)"])
    assert "mirage-gate::" not in res.stdout.str()  # no gate test reports
    assert res.ret == pytest.ExitCode.TESTS_FAILED  # citation_recall >= 0.5 fails the weak models' cases
    assert not (pytester.path / "shard.md").exists()
    data = json.loads(out.read_text())
    assert data["schema"] == "pytest-mirage/partial/1" and data["shard"] == {"index": 1, "count": 2}
    assert data["suites"][0]["name"] == "shardy" and data["suites"][0]["content_hash"].startswith("sha256:")
    assert data["options"]["cli"]["--mirage-shard"] == {"value": "1/2", "source": "--mirage-shard"}
    ids = {r["case_id"] for r in data["results"]}
    # every model of a case is in the same shard
    assert Counter(r["case_id"] for r in data["results"]) == {cid: 3 for cid in ids}
    assert {cid.split("-")[0] for cid in ids} == set(LANGS)


def test_merge_checks_that_the_partials_belong_together(pytester: pytest.Pytester,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    suite = write_suite(pytester.path)
    args = ["shardy", *models(pytester.path, "new")]
    p1, _ = _shard(pytester, 1, 3, args)
    p2, _ = _shard(pytester, 2, 3, args)
    p3, _ = _shard(pytester, 3, 3, args)
    other, _ = _shard(pytester, 3, 3, [*args, "--mirage-seed=5"])
    other = other.rename(pytester.path / "other.json")
    p3, _ = _shard(pytester, 3, 3, args)

    def merged(*paths: Path) -> tuple[int, str]:
        code = main(["merge", *map(str, paths), f"--mirage-report={pytester.path / 'm.json'}"])
        return code, capsys.readouterr().err

    code = main(["merge", str(p1), str(p2), str(p3), f"--mirage-report={p2}"])
    assert code == 4 and f"--mirage-report {p2} is one of the partial reports it merges" in capsys.readouterr().err
    assert p2.exists()
    code, err = merged(p1, p3)
    assert code == 4 and "shard 2/3 missing: pass the partial report of every shard 1..3" in err
    code, err = merged(p1, p2, p2, p3)
    assert code == 4 and f"shard 2/3 is given twice: {p2} and {p2}" in err
    code, err = merged(p1, p2, other)
    assert code == 4 and f"{other} was run with other settings than {p1} (--mirage-seed: unset vs '5')" in err
    bad = pytester.path / "bad.json"
    bad.write_text(json.dumps({"schema": "pytest-mirage/report/1"}))
    code, err = merged(p1, bad)
    assert code == 4 and f"{bad}: schema: found 'pytest-mirage/report/1'; expected 'pytest-mirage/partial/1'" in err
    with (suite / "cases" / "en.jsonl").open("a") as f:
        f.write("\n")
    code, err = merged(p1, p2, p3)
    assert code == 4 and "suite 'shardy'" in err and "changed since the shards ran" in err
    assert not (pytester.path / "m.json").exists()


# ---------------------------------------------------------------------------------------------- exactness
OUTPUTS = ("json", "md", "html")


def junit_view(path: Path) -> tuple[dict[str, str], list[Any]]:
    """A JUnit XML file as (the <testsuite> counts, its test cases: names, properties, failure,
    error or skip with message and text), without times, timestamp and host, cases in a fixed order."""
    from xml.etree import ElementTree as ET

    root = ET.parse(path).getroot()
    suites = root.findall("testsuite")
    assert root.tag == "testsuites" and len(suites) == 1
    counts = {k: v for k, v in suites[0].attrib.items() if k not in ("time", "timestamp", "hostname")}
    cases = []
    for tc in suites[0].findall("testcase"):
        assert tc.get("time") is not None
        props = [(p.get("name"), p.get("value")) for p in tc.iter("property")]
        outcome = [(c.tag, dict(c.attrib), c.text) for c in tc if c.tag != "properties"]
        cases.append((tc.get("classname"), tc.get("name"), props, outcome))
    return counts, sorted(cases, key=repr)


def _outputs(root: Path, name: str) -> list[str]:
    return [f"--mirage-report={root / f'{name}.json'}", f"--mirage-markdown={root / f'{name}.md'}",
            f"--mirage-html={root / f'{name}.html'}"]


def test_shards_merged_write_the_report_of_one_run(pytester: pytest.Pytester,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """The bundled-suite-sized proof: 2 languages x 13 cases x 3 replayed models, case thresholds,
    gates, a baseline with a regression gate, the arena and its bootstrap from recorded battles, and
    head-to-head; N in {1, 2, 3, 5} shards (one of them under xdist) merged give the same bytes."""
    write_suite(pytester.path)
    base = pytester.path / "base.json"
    assert pytester.runpytest("shardy", *models(pytester.path, "old"), f"--mirage-report={base}").ret in (0, 1)
    args = ["shardy", *models(pytester.path, "new"), f"--mirage-battles={write_battles(pytester.path)}",
            "--mirage-scoring=default", "--mirage-tournaments=30", f"--mirage-baseline={base}",
            "--mirage-gate=citation_recall.mean drop <= 0.05",
            "--mirage-github=off"]
    single = pytester.runpytest(*args, *_outputs(pytester.path, "single"), f"--junitxml={pytester.path / 'single.xml'}")
    assert single.ret == pytest.ExitCode.TESTS_FAILED  # case thresholds and gates fail
    want = {ext: (pytester.path / f"single.{ext}").read_bytes() for ext in OUTPUTS}
    rep = json.loads(want["json"])
    assert rep["arena"] and rep["baseline"] and rep["regressions"] and rep["head_to_head"] and not rep.get("fatal")
    assert any(g["passed"] is False for g in rep["gates"])
    want_junit = junit_view(pytester.path / "single.xml")
    assert want_junit[0]["failures"] != "0" and len(want_junit[1]) == len(rep["results"]) + len(rep["gates"]) + len(
        rep["regressions"])
    for n in (1, 2, 3, 5):
        parts = []
        for k in range(1, n + 1):
            extra = ("-n", "2") if (n, k) == (2, 1) else ()  # combinable with xdist
            part, res = _shard(pytester, k, n, args, *extra)
            assert res.ret in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED), res.stdout.str()
            parts.append(part)
        code = main(["merge", *map(str, parts), *_outputs(pytester.path, f"merged{n}"),
                     f"--junitxml={pytester.path / f'merged{n}.xml'}"])
        printed, err = capsys.readouterr()
        assert code == single.ret, printed + err
        assert "mirage merge: " in printed and "FAILED" in printed
        for ext in OUTPUTS:
            got = (pytester.path / f"merged{n}.{ext}").read_bytes()
            assert got == want[ext], f"N={n}: merged.{ext} differs from one run's"
        assert junit_view(pytester.path / f"merged{n}.xml") == want_junit, f"N={n}: the JUnit XML differs"


@pytest.mark.parametrize("repeat", [1, 2])
def test_shards_with_language_filter_and_sample_merge_exactly(pytester: pytest.Pytester,
                                                               capsys: pytest.CaptureFixture[str], repeat: int) -> None:
    write_suite(pytester.path)
    args = ["shardy", *models(pytester.path, "new"), "--mirage-lang=fr", "--mirage-sample=7", "--mirage-github=off",
            f"--mirage-repeat={repeat}"]
    single = pytester.runpytest(*args, f"--mirage-report={pytester.path / 'single.json'}")
    rep = json.loads((pytester.path / "single.json").read_text())
    assert {r["lang"] for r in rep["results"]} == {"fr"} and len({r["case_id"] for r in rep["results"]}) == 7
    assert len(rep["results"]) == 7 * 3 * repeat  # 7 cases x 3 models x the repeats (no reference system)
    parts = [_shard(pytester, k, 3, args)[0] for k in (1, 2, 3)]
    code = main(["merge", *map(str, parts), f"--mirage-report={pytester.path / 'merged.json'}"])
    capsys.readouterr()
    assert code == single.ret
    assert (pytester.path / "merged.json").read_bytes() == (pytester.path / "single.json").read_bytes()


def test_a_shard_with_no_case_exits_0_and_the_merge_still_matches(pytester: pytest.Pytester,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    write_suite(pytester.path)
    args = ["shardy", *models(pytester.path, "new"), "--mirage-lang=en", "--mirage-sample=1", "--mirage-github=off"]
    single = pytester.runpytest(*args, f"--mirage-report={pytester.path / 'single.json'}")
    parts, codes = [], []
    for k in (1, 2, 3):
        part, res = _shard(pytester, k, 3, args)
        parts.append(part)
        codes.append((len(json.loads(part.read_text())["results"]), res.ret))
    assert sorted(n for n, _ in codes) == [0, 0, 3]  # one case, three models: all in one shard
    assert all(ret == pytest.ExitCode.OK for n, ret in codes if n == 0)
    code = main(["merge", *map(str, parts), f"--mirage-report={pytester.path / 'merged.json'}"])
    capsys.readouterr()
    assert code == single.ret
    assert (pytester.path / "merged.json").read_bytes() == (pytester.path / "single.json").read_bytes()


# ---------------------------------------------------------------------------------------------- bundled suites
BUNDLED = Path(__file__).resolve().parents[2] / "suites"
BUNDLED_MODELS = ("control:no-citations", "control:oracle", "control:random-passages", "control:wrong-language",
                  "extractive")  # the bundled suites' reference controls and recorded extractive run


def bundled_battles(root: Path) -> Path:
    """Seeded pairwise verdicts between the bundled suites' models on every bundled case (the ones
    that are not in a run are reported and skipped, in one run and in a merge alike)."""
    rank = {m: i for i, m in enumerate(("control:oracle", "extractive", "control:no-citations",
                                        "control:random-passages", "control:wrong-language"))}
    rows = []
    for f in sorted(BUNDLED.glob("*/cases/*.jsonl")):
        for line in f.read_text(encoding="utf-8").splitlines():
            cid = json.loads(line)["id"]
            for x, a in enumerate(BUNDLED_MODELS):
                for b in BUNDLED_MODELS[x + 1:]:
                    u = _u("bundled", a, b, cid)
                    better = a if rank[a] < rank[b] else b
                    worse = b if better == a else a
                    winner = "Tie" if u < 0.15 else (better if u < 0.8 else worse)
                    rows.append({"query_id": cid, "model_A": a, "model_B": b,
                                 "verdict": "Tie" if winner == "Tie" else ("A" if winner == a else "B")})
    path = root / "bundled-battles.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def bundled_args(*extra: str) -> list[str]:
    return ["--mirage-suite=mirage-mini", "--mirage-suite=khmer-telecom", "--mirage-github=off", "-p", "no:randomly",
            "--mirage-scoring=default", *extra]


def test_shards_of_the_bundled_suites_merged_write_the_report_of_one_run(
        pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]) -> None:
    """The issue's acceptance on the bundled suites (a retrieval suite with a Khmer corpus and an
    oracle suite; the reference controls and the recorded extractive run), with the arena and its
    bootstrap from imported battles, a baseline with a regression gate, case thresholds and the
    suites' gates: N in {1, 2, 3, 5} shards merged write the JSON, Markdown and HTML of one run.
    A seeded subset (4 languages, at most 20 cases each) keeps it to seconds; the whole bundled
    suites are checked the same way by ``python benchmarks/bench_shard.py --bundled``."""
    subset = ("--mirage-lang=km,en,zh,sw", "--mirage-sample=20")
    base = pytester.path / "base.json"
    res = pytester.runpytest(*bundled_args("--mirage-lang=km,en,zh", "--mirage-sample=12"), f"--mirage-report={base}")
    assert res.ret == pytest.ExitCode.OK, res.stdout.str()
    args = bundled_args(*subset, f"--mirage-battles={bundled_battles(pytester.path)}", "--mirage-tournaments=25",
                        f"--mirage-baseline={base}", "--mirage-gate=citation_recall.mean drop <= 0.01",
                        "--mirage-gate=rouge_l.mean >= 0.99")
    single = pytester.runpytest(*args, *_outputs(pytester.path, "single"))
    assert single.ret == pytest.ExitCode.TESTS_FAILED, single.stdout.str()  # the rouge_l gate fails
    want = {ext: (pytester.path / f"single.{ext}").read_bytes() for ext in OUTPUTS}
    rep = json.loads(want["json"])
    assert {s["name"] for s in rep["suites"]} == {"mirage-mini", "khmer-telecom"}
    assert {r["lang"] for r in rep["results"]} == {"km", "en", "zh", "sw"}
    assert {r["model"] for r in rep["results"]} | set(rep["models"]) >= set(BUNDLED_MODELS)
    assert rep["arena"] and rep["baseline"] and rep["regressions"]
    assert not rep["fatal"]
    assert {a["lang"] for a in rep["arena"]} >= {"km", "en", "all"}
    assert any(g["passed"] is False for g in rep["gates"]) and any(g["passed"] for g in rep["gates"])
    for n in (1, 2, 3, 5):
        parts = []
        for k in range(1, n + 1):
            part, res = _shard(pytester, k, n, args)
            assert res.ret in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED), res.stdout.str()
            parts.append(part)
        code = main(["merge", *map(str, parts), *_outputs(pytester.path, f"merged{n}")])
        printed, err = capsys.readouterr()
        assert code == single.ret, printed + err
        for ext in OUTPUTS:
            got = (pytester.path / f"merged{n}.{ext}").read_bytes()
            assert got == want[ext], f"N={n}: merged.{ext} differs from one run's"


def test_merge_writes_the_junit_xml_of_one_run_with_errored_cases(pytester: pytest.Pytester,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """A case whose model fails (a replay file without its answer) is an <error> in setup, as in
    pytest's own file; gates and thresholds are <failure>s; collection errors are <error>s."""
    write_suite(pytester.path)
    run = write_run(pytester.path, "sys-a", 0.9, "new")
    lines = run.read_text().splitlines()
    run.write_text("\n".join(lines[1:]) + "\n")  # en-000 has no answer: its item errors
    broken = pytester.path / "broken"
    broken.mkdir()
    (broken / "suite.toml").write_text('[suite]\nname = "broken"\nmode = "oracle"\ncases = "nope"\n')
    args = ["shardy", "broken", f"--mirage-model=replay:{run}", "--mirage-lang=en", "--mirage-github=off"]
    single = pytester.runpytest(*args, f"--junitxml={pytester.path / 'single.xml'}")
    want = junit_view(pytester.path / "single.xml")
    tags = [o[0][0] for *_x, o in want[1] if o]
    assert "error" in tags and "failure" in tags, want
    assert int(want[0]["errors"]) >= 2  # the errored case and the suite that does not load
    parts = []
    for k in (1, 2):
        part, _res = _shard(pytester, k, 2, args)
        parts.append(part)
    code = main(["merge", *map(str, parts), f"--junitxml={pytester.path / 'merged.xml'}"])
    printed, _err = capsys.readouterr()
    assert code == single.ret
    assert f"mirage report: {pytester.path / 'merged.xml'}" in printed
    assert junit_view(pytester.path / "merged.xml") == want


def test_shards_judge_their_arena_battles_and_the_merge_only_fits(pytester: pytest.Pytester,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """With a live --mirage-judge, each shard judges the sampled matchups of its own cases (all
    models of a case are in its shard) into its partial; the merge, with the judge server gone,
    fits Bradley-Terry on them and writes the bytes of one run."""
    from tests.helpers.fake_openai import FakeOpenAIServer
    from tests.plugin.test_arena_e2e import judge

    write_suite(pytester.path)
    with FakeOpenAIServer(answer=judge) as srv:
        args = ["shardy", *models(pytester.path, "new"), "--mirage-judge", "openai:fake-judge",
                f"--mirage-openai-base-url={srv.base_url}", "--mirage-cache-mode=off", "--mirage-judge-queries=6",
                "--mirage-tournaments=20", "--mirage-github=off"]
        single = pytester.runpytest(*args, *_outputs(pytester.path, "single"))
        one_run_calls = srv.completed
        want = {ext: (pytester.path / f"single.{ext}").read_bytes() for ext in OUTPUTS}
        rep = json.loads(want["json"])
        # 2 languages x 6 sampled cases x 3 pairs x 2 orders
        assert rep["judge"]["judgments"] == 2 * 6 * 3 * 2 and rep["arena"], rep.get("problems")
        parts = []
        for k in (1, 2, 3):
            part, res = _shard(pytester, k, 3, args, *(("-n", "2") if k == 1 else ()))  # the controller judges
            assert res.ret in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED), res.stdout.str()
            parts.append(part)
        shard_calls = srv.completed - one_run_calls
    assert 0 < shard_calls
    stored = [len(json.loads(p.read_text())["arena_judgments"]) for p in parts]
    assert sum(stored) == rep["judge"]["judgments"] and all(stored), stored
    code = main(["merge", *map(str, parts), *_outputs(pytester.path, "merged")])  # no judge server now
    printed, err = capsys.readouterr()
    assert code == single.ret, printed + err
    for ext in OUTPUTS:
        assert (pytester.path / f"merged.{ext}").read_bytes() == want[ext], f"merged.{ext} differs from one run's"


def test_merge_cache_gives_the_next_run_every_shards_answers(pytester: pytest.Pytester,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    from tests.helpers.fake_openai import FakeOpenAIServer

    write_suite(pytester.path)
    with FakeOpenAIServer() as srv:
        args = ["shardy", "--mirage-model=openai:fake-model", f"--mirage-openai-base-url={srv.base_url}",
                "--mirage-github=off"]
        for k in (1, 2):
            _part, res = _shard(pytester, k, 2, args, f"--mirage-cache={pytester.path / f'cache-{k}'}")
            assert res.ret in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED), res.stdout.str()
        asked = srv.completed
    assert asked == 2 * N_CASES
    cache = pytester.path / "merged-cache"
    assert main(["merge-cache", str(cache), str(pytester.path / "cache-1"), str(pytester.path / "cache-2")]) == 0
    out = capsys.readouterr().out
    assert f"cache-1: {N_CASES} answers added, 0 already there" in out, out  # the shards are balanced
    assert f"{cache / 'answers.sqlite3'}: {2 * N_CASES} answers" in out
    # merging again adds nothing; the server is gone: the next run is answered from the merged cache only
    assert main(["merge-cache", str(cache), str(pytester.path / "cache-2" / "answers.sqlite3")]) == 0
    assert f"{N_CASES} already there" in capsys.readouterr().out
    res = pytester.runpytest(*args, f"--mirage-cache={cache}", "--mirage-cache-mode=replay-only",
                             f"--mirage-report={pytester.path / 'next.json'}")
    rep = json.loads((pytester.path / "next.json").read_text())
    assert len(rep["results"]) == 2 * N_CASES and not [r for r in rep["results"] if r["outcome"] == "error"], \
        res.stdout.str()
    assert main(["merge-cache", str(cache), str(pytester.path / "nothing")]) == 2
    assert "nothing: no answer cache there" in capsys.readouterr().err
    assert main(["merge-cache", str(cache), str(cache)]) == 2
    assert "is also one of the caches to merge" in capsys.readouterr().err


CONFTEST = '''
from pytest_mirage import Metric


def pytest_mirage_register_metrics(registry, config):
    registry.register(Metric("answer_words", lambda s: float(len((s.answer.answer or "").split()))))
'''


def test_merge_takes_the_conftest_metrics_with_p_and_names_a_missing_one(
        pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    write_suite(pytester.path)
    pytester.makeconftest(CONFTEST)
    args = ["shardy", *models(pytester.path, "new"), "--mirage-metrics=citation_recall,answer_words",
            "--mirage-gate=answer_words.mean >= 3", "--mirage-github=off"]
    single = pytester.runpytest(*args, f"--mirage-report={pytester.path / 'single.json'}")
    rep = json.loads((pytester.path / "single.json").read_text())
    assert all("answer_words" in r["metrics"] for r in rep["results"]), single.stdout.str()
    parts = [_shard(pytester, k, 2, args)[0] for k in (1, 2)]
    monkeypatch.chdir(pytester.path)
    code = main(["merge", *map(str, parts), "--mirage-report=merged.json"])
    err = capsys.readouterr().err
    assert code == 4 and "metric 'answer_words' of case" in err and "is not registered here" in err
    assert "pass that module or file with -p MODULE (e.g. -p conftest.py)" in err
    code = main(["merge", *map(str, parts), "--mirage-report=merged.json", "-p", "nope_no_such_module"])
    assert code == 4 and "-p nope_no_such_module: importing it failed (ModuleNotFoundError" in capsys.readouterr().err
    code = main(["merge", *map(str, parts), "--mirage-report=merged.json", "-p", str(pytester.path / "conftest.py")])
    capsys.readouterr()
    assert code == single.ret
    assert (pytester.path / "merged.json").read_bytes() == (pytester.path / "single.json").read_bytes()


def test_merge_on_another_checkout_path_finds_the_suites_below_its_rootdir(
        pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    write_suite(pytester.path)
    args = ["shardy", *models(pytester.path, "new"), "--mirage-github=off"]
    single = pytester.runpytest(*args, f"--mirage-report={pytester.path / 'single.json'}")
    parts = [_shard(pytester, k, 2, args)[0] for k in (1, 2)]
    other = pytester.path / "elsewhere"
    shutil.copytree(pytester.path / "shardy", other / "shardy")
    (pytester.path / "shardy").rename(pytester.path / "shardy-gone")  # the shards' checkout is gone
    monkeypatch.chdir(other)
    code = main(["merge", *map(str, parts), "--mirage-report=merged.json"])
    printed, err = capsys.readouterr()
    assert code == single.ret, printed + err
    rep = json.loads((other / "merged.json").read_text())
    want = json.loads((pytester.path / "single.json").read_text())
    assert len(rep["results"]) == len(want["results"]) and rep["gates"] == json.loads(
        json.dumps(want["gates"]).replace(str(pytester.path / "shardy"), str(other / "shardy")))
    # the gates (evaluated by the merge) name this checkout's manifest; a case's threshold message
    # was written by its shard and names the shard's path
    assert any(str(other / "shardy" / "suite.toml") in g["source"] for g in rep["gates"])
