"""Unit tests: rule parsing, precedence, statistics, output parsing, citations."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pytest_mirage.aggregate.expr import merge_rules, parse_rule
from pytest_mirage.aggregate.statistics import statistic
from pytest_mirage.errors import ConfigError
from pytest_mirage.prompts import find_citations, parse_output, strip_citations
from pytest_mirage.stats.intervals import bootstrap_mean_ci


@pytest.mark.parametrize(("expr", "metric", "stat", "lang", "op", "value"), [
    ("citation_recall >= 0.5", "citation_recall", "mean", None, ">=", 0.5),
    ("language_match.p10@hi>0.9", "language_match", "p10", "hi", ">", 0.9),
    ("  rouge_l.ci_low  <=  .25 ", "rouge_l", "ci_low", None, "<=", 0.25),
    ("x==1e-3", "x", "mean", None, "==", 0.001),
])
def test_parse_gate(expr: str, metric: str, stat: str, lang: str | None, op: str, value: float) -> None:
    r = parse_rule(expr, gate=True, source="s")
    assert (r.metric, r.stat, r.lang, r.op, r.value) == (metric, stat, lang, op, value)


def test_threshold_has_no_stat_and_messages() -> None:
    r = parse_rule("citation_recall@hi >= 0.5", gate=False, source="--mirage-threshold")
    assert r.stat is None and r.lang == "hi"
    assert r.describe_failure(1 / 3) == "citation_recall@hi 0.33 < 0.50 (--mirage-threshold)"
    with pytest.raises(ConfigError, match="gates only"):
        parse_rule("citation_recall.mean >= 0.5", gate=False)
    with pytest.raises(ConfigError, match="unknown statistic 'avg'"):
        parse_rule("citation_recall.avg >= 0.5", gate=True)
    with pytest.raises(ConfigError, match="cannot parse"):
        parse_rule("citation_recall ~ 0.5", gate=True)


def test_merge_rules_later_layer_wins_per_key() -> None:
    manifest = [parse_rule("a >= 0.1", gate=False, source="m"), parse_rule("a@hi >= 0.2", gate=False, source="m")]
    ini = [parse_rule("a >= 0.3", gate=False, source="ini")]
    cli = [parse_rule("b >= 0.4", gate=False, source="cli")]
    merged = {(r.metric, r.lang): r for r in merge_rules([manifest, ini, cli])}
    assert merged[("a", None)].source == "ini" and merged[("a", "hi")].source == "m" and merged[("b", None)].value == 0.4


def test_statistics() -> None:
    vals = [0.0, 0.5, 1.0, 1.0]
    assert statistic("mean", vals) == 0.625
    assert statistic("median", vals) == 0.75
    assert statistic("min", vals) == 0.0
    assert statistic("p10", vals) == pytest.approx(np.quantile(vals, 0.1))
    assert statistic("pass_rate", vals, [True, False, True, True]) == 0.75
    assert math.isnan(statistic("mean", []))
    lo, hi = bootstrap_mean_ci(vals, seed=0)
    assert 0 <= lo <= 0.625 <= hi <= 1
    assert bootstrap_mean_ci(vals, seed=0) == bootstrap_mean_ci(vals, seed=0)
    assert bootstrap_mean_ci([0.3]) == (0.3, 0.3)


def test_parse_output_mirage_format() -> None:
    ids = ["12345#3", "777#0", "9#1"]
    out = parse_output("##Reason: It was built in 1889 [12345#3][777#0, 9#1]. ##Answer: In 1889 [12345#3].", ids)
    assert out.format_ok and out.answer == "In 1889 [12345#3]." and out.reason.startswith("It was built")
    assert out.citations == ("12345#3", "777#0", "9#1") and out.unknown_citations == ()


def test_parse_output_index_citations_unknown_and_no_format() -> None:
    ids = ["a#0", "b#1", "c#2"]
    out = parse_output("The answer [2] and [3, 1] but also [zz#9] and [citation needed].", ids)
    assert not out.format_ok and out.answer.startswith("The answer")
    assert out.citations == ("b#1", "c#2", "a#0") and out.unknown_citations == ("zz#9",)
    # an id that is itself a number wins over the index reading
    assert find_citations("[2]", ["2", "x"]) == (["2"], [])
    # out-of-range index is unknown, not a crash
    assert find_citations("[7]", ids) == ([], ["7"])


def test_parse_uses_last_answer_marker_and_full_width_separators() -> None:
    out = parse_output("##Reason: 東京 [a#0]、[b#1] ##Answer: 一 ##Answer: 二 [a#0，b#1]", ["a#0", "b#1"])
    assert out.answer == "二 [a#0，b#1]" and out.citations == ("a#0", "b#1")


def test_strip_citations() -> None:
    assert strip_citations("Paris [1#0] is big [2#1, 3#0].") == "Paris is big."


def test_a_registered_gate_statistic_is_parsed_and_computed(monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_mirage.aggregate import statistics as gs
    from pytest_mirage.aggregate.expr import vacuous

    monkeypatch.setattr(gs, "_REGISTRY", dict(gs._REGISTRY))
    with pytest.raises(ConfigError, match="unknown statistic 'p90'"):
        parse_rule("citation_recall.p90 >= 0.5", gate=True)
    gs.register_statistic(gs.GateStatistic("p90", lambda c: sorted(c.values)[int(0.9 * (len(c.values) - 1))]))
    rule = parse_rule("citation_recall.p90 >= 0.5", gate=True)
    assert rule.stat == "p90"
    assert statistic("p90", [0.1 * i for i in range(11)]) == pytest.approx(0.9)
    assert vacuous(parse_rule("citation_recall.p90 >= 7", gate=True, source="x"), (0.0, 1.0))
    with pytest.raises(ConfigError, match="already registered"):
        gs.register_statistic(gs.GateStatistic("mean", None))


def test_ppi_statistics_are_not_computed_from_case_values() -> None:
    with pytest.raises(ConfigError, match="human labels"):
        statistic("ppi_low", [0.5])
