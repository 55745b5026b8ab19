"""A suite's [source] table reads inside the suite folder only, unless the user allows a path (issue 21).

Each attack (an absolute path, a path with '..', a file symlinked out of the suite folder, a file
swapped for a symlink after the manifest was checked) is refused as the suite's load error naming the
manifest line, the field, the path and the option that allows it; the outside file's content never
reaches a model or the output. The same data is read when the user allows its folder.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from pytest_mirage.errors import SuiteError
from pytest_mirage.suites.loader import load_suite
from pytest_mirage.suites.paths import Confinement
from pytest_mirage.suites.problems import Problems
from pytest_mirage.suites.sources import cases_from_source, source_from_values

SECRET = "SECRET-TOPIC-7f3a"  # the query of the outside data: must not be read when refused


def _miracl(folder: Path) -> Path:
    """A one-query MIRACL folder (topics, qrels, corpus) for language sw."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "topics.miracl-v1.0-sw-dev.tsv").write_text(f"1\t{SECRET} where is Mombasa?\n", encoding="utf-8")
    (folder / "qrels.miracl-v1.0-sw-dev.tsv").write_text("1 Q0 10#0 1\n1 Q0 10#1 0\n", encoding="utf-8")
    (folder / "corpus").mkdir(exist_ok=True)
    (folder / "corpus" / "sw.jsonl").write_text(
        "".join(json.dumps({"docid": d, "title": "T", "text": t}) + "\n"
                for d, t in (("10#0", "Mombasa is a port city in Kenya."), ("10#1", "Nairobi is inland."))),
        encoding="utf-8")
    return folder


def _suite(folder: Path, source: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "suite.toml").write_text(f'[suite]\nname = "src"\n\n[source]\nkind = "miracl"\nlang = "sw"\n{source}\n',
                                       encoding="utf-8")
    return folder


def _run(pytester: pytest.Pytester, *args: str) -> tuple[pytest.RunResult, str]:
    res = pytester.runpytest("src", f"--mirage-cache={pytester.path / 'cache'}", "-p", "no:cacheprovider", *args)
    return res, res.stdout.str() + res.stderr.str()


def _refused(res: pytest.RunResult, out: str, field: str, path: str, allow: Path) -> None:
    assert res.ret != pytest.ExitCode.OK, out
    flat = " ".join(out.split())  # the terminal wraps long lines
    assert "suite.toml:" in flat and f"[source] {field}: " in flat and path in flat, out
    assert "is outside the suite folder" in flat and f"--mirage-trusted-path {allow}" in flat, out
    assert "mirage_trusted_paths" in flat, out
    assert SECRET not in out  # nothing of the outside file was read, sent or printed


def test_absolute_source_dir_is_refused(pytester: pytest.Pytester) -> None:
    outside = _miracl(pytester.path / "outside")
    _suite(pytester.path / "src", f'dir = "{outside.as_posix()}"')
    res, out = _run(pytester)
    _refused(res, out, "dir", str(outside), outside.resolve())


def test_dotdot_source_dir_and_corpus_are_refused(pytester: pytest.Pytester) -> None:
    outside = _miracl(pytester.path / "outside")
    _suite(pytester.path / "src", 'dir = "../outside"\ncorpus = "../outside/corpus/sw.jsonl"')
    res, out = _run(pytester)
    _refused(res, out, "dir", "'../outside'", outside.resolve())
    _refused(res, out, "corpus", "'../outside/corpus/sw.jsonl'", (outside / "corpus").resolve())


def test_export_path_outside_is_refused(pytester: pytest.Pytester) -> None:
    outside = pytester.path / "outside"
    outside.mkdir()
    (outside / "export.jsonl").write_text(json.dumps({"query_id": SECRET}) + "\n", encoding="utf-8")
    folder = pytester.path / "src"
    folder.mkdir()
    (folder / "suite.toml").write_text('[suite]\nname = "src"\nsource = "mirage-export:../outside/export.jsonl"\n',
                                       encoding="utf-8")
    res, out = _run(pytester)
    assert res.ret != pytest.ExitCode.OK and "[suite] source path: '../outside/export.jsonl'" in " ".join(out.split())
    assert SECRET not in out


def test_file_symlinked_out_of_the_suite_folder_is_refused(pytester: pytest.Pytester) -> None:
    outside = _miracl(pytester.path / "outside")
    data = _miracl(pytester.path / "src" / "data")  # inside the folder; its topics file leads out
    topics = data / "topics.miracl-v1.0-sw-dev.tsv"
    topics.unlink()
    os.symlink(outside / topics.name, topics)
    _suite(pytester.path / "src", 'dir = "data"')
    res, out = _run(pytester)
    _refused(res, out, "dir", str(topics), outside.resolve())


def test_folder_symlinked_out_of_the_suite_folder_is_refused(pytester: pytest.Pytester) -> None:
    outside = _miracl(pytester.path / "outside")
    (pytester.path / "src").mkdir()
    os.symlink(outside, pytester.path / "src" / "data")
    _suite(pytester.path / "src", 'dir = "data"')
    res, out = _run(pytester)
    _refused(res, out, "dir", f"'data' (resolves to {outside.resolve()})", outside.resolve())


def test_a_trusted_path_on_the_command_line_or_in_the_ini_allows_it(pytester: pytest.Pytester) -> None:
    outside = _miracl(pytester.path / "outside")
    _suite(pytester.path / "src", 'dir = "../outside"')
    res, out = _run(pytester, f"--mirage-trusted-path={outside}")
    assert res.ret == pytest.ExitCode.OK, out
    res.assert_outcomes(passed=1)
    pytester.makeini("[pytest]\nmirage_trusted_paths =\n    outside\n")  # relative to the rootdir
    res, out = _run(pytester)
    assert res.ret == pytest.ExitCode.OK, out
    # a trusted path that does not exist is a usage error naming it
    res, out = _run(pytester, f"--mirage-trusted-path={pytester.path / 'typo'}")
    assert res.ret == pytest.ExitCode.USAGE_ERROR, out
    assert f"--mirage-trusted-path: '{pytester.path / 'typo'}'" in out and "does not exist" in out


def test_bundled_and_inside_sources_still_load(tmp_path: Path) -> None:
    _miracl(tmp_path / "data")
    suite = load_suite(_suite(tmp_path, 'dir = "data"'))
    assert [c.id for c in suite.cases] == ["1"]


def test_a_file_swapped_for_a_symlink_after_the_check_is_refused_when_read(tmp_path: Path) -> None:
    """The manifest's paths are checked when it is read; every file is checked again just before it
    is opened, so a topics file replaced by a symlink out in between is not read."""
    outside = _miracl(tmp_path / "outside")
    root = tmp_path / "suite"
    data = _miracl(root / "data")
    problems = Problems()
    confine = Confinement(root, (), "[source]")
    src = source_from_values("miracl", {"path": "data", "lang": "sw"}, root, lambda key: f"suite.toml:{key}",
                             problems, confine)
    assert src is not None and not problems.count
    topics = data / "topics.miracl-v1.0-sw-dev.tsv"
    topics.unlink()
    os.symlink(outside / topics.name, topics)  # the swap
    cases = cases_from_source(src, "s", lambda key: f"suite.toml:{key}", problems)
    assert cases == () and problems.count == 1
    message = next(iter(problems.messages()))
    assert message.startswith("suite.toml:dir: [source] dir: ") and str(topics) in message
    assert f"--mirage-trusted-path {outside.resolve()}" in message and SECRET not in message
    with pytest.raises(SuiteError, match="outside the suite folder"):
        load_suite(_suite(root, 'dir = "data"'))
    assert load_suite(_suite(root, 'dir = "data"'), trusted_paths=[outside]).cases[0].question.startswith(SECRET)


def test_self_check_takes_the_trusted_path_too(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from pytest_mirage.__main__ import main

    outside = _miracl(tmp_path / "outside")
    suite = _suite(tmp_path / "suite", 'dir = "../outside"')
    assert main(["self-check", str(suite)]) == 2
    assert "--mirage-trusted-path" in capsys.readouterr().err
    assert main(["self-check", str(suite), "--mirage-trusted-path", str(outside)]) in (0, 1)  # loaded and checked
    assert "outside the suite folder" not in capsys.readouterr().err


def test_make_runs_takes_the_trusted_path_too(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from pytest_mirage.__main__ import main

    outside = _miracl(tmp_path / "outside")
    suite = _suite(tmp_path / "suite", 'dir = "../outside"')
    assert main(["make-runs", str(suite)]) == 2
    err = capsys.readouterr().err
    assert "--mirage-trusted-path" in err and SECRET not in err
    assert not (suite / "runs").exists()
    assert main(["make-runs", str(suite), "--mirage-trusted-path", str(tmp_path / "typo")]) == 2
    err = capsys.readouterr().err
    assert f"--mirage-trusted-path: '{tmp_path / 'typo'}'" in err and "does not exist" in err, err
    assert main(["make-runs", str(suite), "--mirage-trusted-path", str(outside)]) == 0
    (line,) = (suite / "runs" / "extractive.jsonl").read_text(encoding="utf-8").splitlines()
    assert json.loads(line)["case_id"] == "1"
