"""Calibration of the faithfulness signals against a team's own labels, through the plugin: a small
two-language suite, a replayed system whose answers are faithful or invent a number, and a
labels.csv saying which answers are faithful. The report holds per signal x language ROC AUC,
precision / recall / F1 at the configured threshold and the threshold reaching the chosen
precision, in the JSON (read back byte for byte), the terminal, Markdown and HTML."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path

import pytest

from pytest_mirage.report.model import RunReport

TOWNS = {"en": "Town {i} was founded in the year {y} by river traders.",
         "de": "Die Stadt {i} wurde im Jahr {y} von Flusshändlern gegründet."}
EXTRA = {"en": "Town {i} has a museum of old clocks and a market.",
         "de": "Die Stadt {i} hat ein Museum alter Uhren und einen Markt."}
INVENTED = {"en": "Town {i} was founded in the year {y} by river traders. It has {n} bridges and a royal palace.",
            "de": "Die Stadt {i} wurde im Jahr {y} von Flusshändlern gegründet. Sie hat {n} Brücken und einen "
                  "Königspalast."}
N = 8  # cases per language; odd-numbered ones unfaithful


def _suite(root: Path) -> Path:
    d = root / "calib"
    (d / "cases").mkdir(parents=True)
    (d / "suite.toml").write_text('[suite]\nname = "calib"\nmode = "oracle"\ncases = ["cases/*.jsonl"]\n')
    lines, run, labels = [], [], ["# which answers a person found faithful (1) or not (0)",
                                  "case_id,model,metric,label,note"]
    for lang in ("de", "en"):
        for i in range(N):
            cid, year = f"{lang}-{i:02d}", 1200 + 7 * i
            passages = [{"id": f"{lang}{i}#0", "title": f"T{i}", "text": TOWNS[lang].format(i=i, y=year)},
                        {"id": f"{lang}{i}#1", "title": f"T{i}", "text": EXTRA[lang].format(i=i)}]
            lines.append(json.dumps({"id": cid, "lang": lang, "question": f"? {i}", "passages": passages,
                                     "relevant": [f"{lang}{i}#0"], "answers": [TOWNS[lang].format(i=i, y=year)]},
                                    ensure_ascii=False))
            bad = i % 2 == 1
            text = (INVENTED[lang].format(i=i, y=year + 300, n=40 + i) if bad
                    else TOWNS[lang].format(i=i, y=year))
            run.append(json.dumps({"case_id": cid, "model": "sys", "output": f"##Answer: {text} [{lang}{i}#0]"},
                                  ensure_ascii=False))
            if i < 6:  # some cases labelled, not all
                labels.append(f"{cid},sys,faithfulness,{0 if bad else 1},")
    (d / "cases" / "c.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (root / "sys.jsonl").write_text("\n".join(run) + "\n", encoding="utf-8")
    (d / "labels.csv").write_text("\n".join(labels) + "\n", encoding="utf-8")
    return d


def test_faithfulness_signals_calibrated_against_labels(pytester: pytest.Pytester) -> None:
    _suite(pytester.path)
    out, md, html = (pytester.path / n for n in ("r.json", "r.md", "r.html"))
    res = pytester.runpytest("calib", f"--mirage-model=replay:{pytester.path / 'sys.jsonl'}",
                             "--mirage-metrics=faithfulness,faithfulness_lexical,support_lexical,support_facts",
                             "--mirage-threshold=support_lexical@de >= 0.6", "--mirage-calibration-precision=0.8",
                             f"--mirage-report={out}", f"--mirage-markdown={md}", f"--mirage-html={html}")
    text = res.stdout.str()
    rep = json.loads(out.read_text())
    (sec,) = rep["calibration"]
    rows = {(r["metric"], r["lang"]): r for r in sec["faithfulness"]}
    metrics = [m for m, _ in rows]
    assert metrics[0] == "faithfulness" and {"faithfulness_lexical", "support_lexical", "support_facts"} <= set(metrics)
    for m in ("faithfulness", "faithfulness_lexical", "support_lexical", "support_facts"):
        assert {lang for (mm, lang) in rows if mm == m} == {"de", "en", "all"}
    f = rows[("faithfulness", "all")]
    assert (f["n"], f["faithful"], f["nulls"]) == (12, 6, 0)
    assert f["target_precision"] == 0.8
    # the offline judge separates the invented answers from the copied ones
    assert f["roc_auc"] > 0.9, f
    # no case threshold on faithfulness: the shipped judge model's own default (0.4)
    assert f["threshold"] == pytest.approx(0.4) and "default" in f["threshold_source"]
    # a case threshold on support_lexical in German only: de counts at it, en at the default
    de, en = rows[("support_lexical", "de")], rows[("support_lexical", "en")]
    assert de["threshold"] == 0.6 and "--mirage-threshold" in de["threshold_source"]
    assert en["threshold"] == 0.5 and en["threshold_source"] == "default"
    assert rows[("support_lexical", "all")]["threshold"] is None
    for r in sec["faithfulness"]:
        assert r["precision_threshold"] is None or 0 <= r["precision_threshold"] <= 1
    # the labels used by the PPI step are still there
    assert sec["agreement"][0]["metric"] == "faithfulness"

    # the terminal: a compact table
    assert "faithfulness signals against the labels" in text
    line = next(x for x in res.stdout.lines if x.strip().startswith("faithfulness ") and " all " in x)
    assert "12" in line and ">= 0.400" in line, line
    assert "for P >= 0.800" in text
    # Markdown and HTML: the table, escaped
    assert "Faithfulness signals against the answers' faithfulness labels" in md.read_text()
    assert "| support_lexical | de |" in md.read_text()
    page = html.read_text()
    assert "threshold for precision 0.800" in page and "Faithfulness signals against the answers" in page

    # read back: the same bytes
    again = RunReport.from_json(rep)
    assert again.statistics.calibration[0].faithfulness[0].metric == "faithfulness"
    assert json.dumps(again.to_json(), ensure_ascii=False, sort_keys=True) == \
        json.dumps(rep, ensure_ascii=False, sort_keys=True)


def test_not_reachable_and_a_bad_precision_option(pytester: pytest.Pytester) -> None:
    d = _suite(pytester.path)
    # a person who says the copied answers are the unfaithful ones: no threshold reaches precision 1
    lines = (d / "labels.csv").read_text().splitlines()
    flipped = [ln.replace(",faithfulness,0,", ",faithfulness,X,").replace(",faithfulness,1,", ",faithfulness,0,")
               .replace(",faithfulness,X,", ",faithfulness,1,") for ln in lines]
    (d / "labels.csv").write_text("\n".join(flipped) + "\n")
    out = pytester.path / "r.json"
    res = pytester.runpytest("calib", f"--mirage-model=replay:{pytester.path / 'sys.jsonl'}",
                             "--mirage-metrics=faithfulness", "--mirage-calibration-precision=1",
                             f"--mirage-report={out}")
    rows = json.loads(out.read_text())["calibration"][0]["faithfulness"]
    f = next(r for r in rows if r["metric"] == "faithfulness" and r["lang"] == "all")
    assert f["roc_auc"] < 0.1 and f["precision_threshold"] is None
    assert "not reachable" in res.stdout.str()
    res = pytester.runpytest("calib", f"--mirage-model=replay:{pytester.path / 'sys.jsonl'}",
                             "--mirage-calibration-precision=1.5")
    assert res.ret == pytest.ExitCode.USAGE_ERROR
    res.stderr.fnmatch_lines(["*--mirage-calibration-precision*1.5*expected a target precision in (0, 1]*"])


class _Rows(HTMLParser):
    """The sentence-verdict rows of an HTML report: [(verdict class, [cell texts])]."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[tuple[str, list[str]]] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        cls = dict(attrs).get("class") or ""
        if tag == "tr" and cls.startswith("verdict "):
            self.rows.append((cls.split()[1], []))
        elif tag == "td" and self.rows:
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "td" and self._cell is not None:
            self.rows[-1][1].append("".join(self._cell).strip())
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def test_failed_cases_show_their_sentence_verdicts(pytester: pytest.Pytester) -> None:
    _suite(pytester.path)
    run = pytester.path / "sys.jsonl"
    lines = run.read_text(encoding="utf-8").splitlines()
    # an answer whose invented sentence carries markup: shown as text, never as HTML
    first = json.loads(lines[1])
    first["output"] = ("##Answer: Town 1 was founded in the year 1207 by river traders. [en1#0] It has <script>x</script> "
                       "94 bridges. Unable to answer based on given passages.")
    lines = [ln for ln in lines if json.loads(ln)["case_id"] != "en-01"] + [json.dumps(first | {"case_id": "en-01"})]
    run.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out, html = pytester.path / "r.json", pytester.path / "r.html"
    res = pytester.runpytest("calib", f"--mirage-model=replay:{run}", "--mirage-threshold=faithfulness >= 0.99",
                             f"--mirage-report={out}", f"--mirage-html={html}")
    assert res.ret == pytest.ExitCode.TESTS_FAILED
    rep = json.loads(out.read_text())
    case = next(c for c in rep["cases"] if c["case_id"] == "en-01")
    verdicts = [s["verdict"] for s in case["sentences"]]
    assert verdicts[0] == "supported" and "unsupported" in verdicts and verdicts[-1] == "refusal", case["sentences"]
    bad = next(s for s in case["sentences"] if s["verdict"] == "unsupported")
    assert "number: 94" in bad["missing"] and "94" in bad["reason"]
    assert case["sentences"][0]["aligned_passage"] == "en1#0"
    assert "founded in the year 1207" in case["sentences"][0]["aligned_sentence"]
    page = html.read_text(encoding="utf-8")
    assert "<script>x</script>" not in page and "&lt;script&gt;x&lt;/script&gt;" in page
    parser = _Rows()
    parser.feed(page)
    mine = [cells for verdict, cells in parser.rows if "94 bridges" in cells[0]]
    assert mine and mine[0][1] == "unsupported" and "number: 94" in mine[0][3], parser.rows
    assert any(v == "refusal" and cells[1] == "refusal" for v, cells in parser.rows)
    assert any(v == "supported" and cells[2].startswith("[en1#0] Town 1 was founded") for v, cells in parser.rows)
    # the JSON carries them; read back, the same bytes
    again = RunReport.from_json(rep)
    assert json.dumps(again.to_json(), ensure_ascii=False, sort_keys=True) == \
        json.dumps(rep, ensure_ascii=False, sort_keys=True)
