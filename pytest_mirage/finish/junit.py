"""JUnit XML without pytest: the file ``python -m pytest_mirage merge --junitxml PATH`` writes.

A sharded run's case items ran in the shards, whose own ``--junitxml`` files hold each shard's
share; its gates are evaluated only by the merge. The merge writes the file one run's
``--junitxml`` would have written (pytest's default ``xunit2`` family), from what each shard
stored per item in its partial report (:class:`JunitCase`: node id, outcome, pytest's failure
text, duration) and from the merged report's gates and regression gates:

* one ``<testcase>`` per case item, ``classname``/``name`` from the node id as pytest mangles it,
  the ``mirage.*`` properties of its results (:func:`junit_properties`), ``<failure>`` for a missed
  threshold, ``<error>`` for a setup error (``failed on setup with "..."``), ``<skipped>``;
* one ``<testcase>`` per gate (``mirage-gate.<suite>.<lang>.<model>`` / the expression) with its
  ``mirage.gate`` property, failed or skipped (not evaluable) as in a run;
* one per collection error (``<error message="collection failure">``).

What differs from pytest's own file: the test cases are in the order of the merged results (a run
writes them in the order they finished), the ``<testsuite>`` ``time`` is the sum of the items'
durations (a run's is its wall time) and ``timestamp``/``hostname`` are the merge's; tests other
than mirage cases (plain ``test_*.py`` functions run in a shard) are only in that shard's file;
captured output (``<system-out>``) is not kept.
"""

from __future__ import annotations

import re
import socket
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any
from xml.etree import ElementTree as ET

if TYPE_CHECKING:
    from ..report.model import CollectionError, RunReport
    from ..results import CaseResult

Key = tuple[str, str, str, int]
OUTCOMES = ("passed", "failed", "error", "skipped")
MANIFEST = "suite.toml"


def junit_properties(results: Sequence[CaseResult]) -> list[tuple[str, object]]:
    """The model, every metric value, the thresholds missed and the error, as ``mirage.*`` properties.

    In a pytest run they go on the teardown report only: JUnit XML reads a test case's properties
    from that report, and pytest copies ``item.user_properties`` into all three reports of an item
    (setup, call, teardown), which xdist then serializes three times."""
    props: list[tuple[str, object]] = []
    for result in results:
        props.append(("mirage.case", f"{result.suite}/{result.case_id} ({result.lang})"))
        props.append(("mirage.model", result.model))
        props += [(f"mirage.metric.{k}", "null" if v is None else f"{v:.6g}") for k, v in sorted(result.metrics.items())]
        props += [(f"mirage.check.{k}", "passed" if ok else "failed") for k, ok in sorted(result.checks.items())]
        props += [("mirage.failure", f) for f in result.failures]
        if result.error:
            props.append(("mirage.error", result.error))
    return props


@dataclass(frozen=True, slots=True)
class JunitCase:
    """What a shard keeps of one case item for the merged JUnit file: its node id, the keys of its
    results, its outcome (``passed``, ``failed`` in the call, ``error`` in setup, ``skipped``),
    pytest's text of the failure (``str(report.longrepr)``) and its duration (setup + call +
    teardown, seconds)."""

    nodeid: str
    keys: tuple[Key, ...]
    outcome: str = "passed"
    text: str = ""
    when: str = "call"
    time: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {"nodeid": self.nodeid, "keys": [list(k) for k in self.keys], "outcome": self.outcome,
                "text": self.text, "when": self.when, "time": round(self.time, 6)}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> JunitCase:
        keys = tuple((str(a), str(b), str(c), int(r)) for a, b, c, r in d["keys"])
        outcome = str(d.get("outcome", "passed"))
        if outcome not in OUTCOMES:
            raise ValueError(f"outcome {outcome!r}; expected one of {list(OUTCOMES)}")
        return cls(str(d["nodeid"]), keys, outcome, str(d.get("text", "")), str(d.get("when", "call")),
                   float(d.get("time", 0.0)))

    def with_report(self, when: str, outcome: str, text: str, duration: float, keys: Sequence[Key]) -> JunitCase:
        """This item after one more of its reports (setup, call, teardown): the first failure stays."""
        out, txt, w = self.outcome, self.text, self.when
        if out == "passed" and outcome != "passed":
            out = "skipped" if outcome == "skipped" else ("failed" if when == "call" else "error")
            txt, w = text, when
        return JunitCase(self.nodeid, tuple(dict.fromkeys([*self.keys, *keys])), out, txt, w, self.time + duration)


# pytest's bin_xml_escape: characters XML 1.0 cannot hold are written as #xNN
_ILLEGAL = re.compile("[^\u0009\u000a\u000d\u0020-\u007e\u0080-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _xml(text: object) -> str:
    return _ILLEGAL.sub(lambda m: f"#x{ord(m.group()):02X}" if ord(m.group()) <= 0xFF else f"#x{ord(m.group()):04X}",
                        str(text))


def _names(nodeid: str) -> tuple[str, str]:
    """(classname, name) of a node id as pytest's junitxml mangles it."""
    path, bracket, params = nodeid.partition("[")
    names = path.split("::")
    names[0] = re.sub(r"\.py$", "", names[0].replace("/", "."))
    names[-1] += bracket + params
    return ".".join(names[:-1]), names[-1]


def gate_location(source: str, rootpath: Path) -> tuple[str, int | None]:
    """(path relative to the rootdir, 0-based line) of a rule source such as ``/x/suite.toml:12``."""
    path, _, line = source.rpartition(":")
    if path and line.isdigit() and path.endswith(MANIFEST):
        p = Path(path)
        rel = p.relative_to(rootpath) if p.is_absolute() and p.is_relative_to(rootpath) else p
        return str(rel), int(line) - 1
    return "mirage-gates", None


def _testcase(nodeid: str, time: float, props: Sequence[tuple[str, object]]) -> ET.Element:
    classname, name = _names(nodeid)
    el = ET.Element("testcase", {"classname": _xml(classname), "name": _xml(name), "time": f"{time:.3f}"})
    if props:
        p = ET.SubElement(el, "properties")
        for k, v in props:
            ET.SubElement(p, "property", {"name": _xml(k), "value": _xml(v)})
    return el


def _add(el: ET.Element, tag: str, message: str, text: str | None = None, **extra: str) -> None:
    child = ET.SubElement(el, tag, {**({"type": extra["type"]} if "type" in extra else {}), "message": _xml(message)})
    if text is not None:
        child.text = _xml(text)


def junit_xml(report: RunReport, cases: Sequence[JunitCase], collection_errors: Sequence[CollectionError] = (),
              *, rootpath: Path | None = None, suite_name: str = "pytest") -> bytes:
    """The JUnit XML of a merged run (see the module doc); ``rootpath``: what gate sources are
    shown relative to (the current directory by default)."""
    from ..aggregate.regression import regression_outcome_text
    from ..report.sanitize import neutralise_commands

    by_key: dict[Key, CaseResult] = {r.key: r for r in report.results}
    order = {r.key: i for i, r in enumerate(report.results)}
    counts = dict.fromkeys(("errors", "failures", "skipped", "tests"), 0)
    elements: list[ET.Element] = []
    for e in collection_errors:
        el = _testcase(e.nodeid, 0.0, ())
        _add(el, "error", "collection failure", e.message)
        counts["errors"] += 1
        counts["tests"] += 1
        elements.append(el)
    total = 0.0
    for c in sorted(cases, key=lambda c: (min((order.get(k, len(order)) for k in c.keys), default=len(order)),
                                          c.nodeid)):
        el = _testcase(c.nodeid, c.time, junit_properties([by_key[k] for k in c.keys if k in by_key]))
        total += c.time
        if c.outcome == "failed":
            _add(el, "failure", c.text, c.text)
            counts["failures"] += 1
        elif c.outcome == "error":
            _add(el, "error", f'failed on {"teardown" if c.when == "teardown" else "setup"} with "{c.text}"', c.text)
            counts["errors"] += 1
        elif c.outcome == "skipped":
            _add(el, "skipped", c.text, c.text, type="pytest.skip")
            counts["skipped"] += 1
        counts["tests"] += 1
        elements.append(el)
    root_dir = rootpath if rootpath is not None else Path.cwd()
    gates = [(f"{g.suite}::{g.lang}::{g.model}::{g.expr}", g.source, g.passed, g.describe(), "gate")
             for g in report.gates]
    gates += [(f"{g.suite}::{g.lang}::{g.model}::{g.expr}", g.source, g.passed,
               f"{g.suite} [{g.lang}] {g.model}: {g.expr}: " + regression_outcome_text(g.to_json()), "regression gate")
              for g in report.statistics.regressions]
    for ident, source, passed, text, kind in gates:
        ident, text = neutralise_commands(ident), neutralise_commands(text)
        path, line = gate_location(source, root_dir)
        el = _testcase(f"mirage-gate::{ident}", 0.0, [("mirage.gate", text)])
        if passed is False:
            _add(el, "failure", f"{kind} {text}", f"{kind} {text}")
            counts["failures"] += 1
        elif passed is None:
            _add(el, "skipped", f"not evaluable {kind}: {text}", f"{path}:{(line or 0) + 1}: not evaluable {kind}: {text}",
                 type="pytest.skip")
            counts["skipped"] += 1
        counts["tests"] += 1
        elements.append(el)
    suite = ET.Element("testsuite", {"name": suite_name, **{k: str(v) for k, v in counts.items()},
                                     "time": f"{total:.3f}", "timestamp": datetime.now(UTC).isoformat(),
                                     "hostname": socket.gethostname()})
    suite.extend(elements)
    root = ET.Element("testsuites", {"name": "pytest tests"})
    root.append(suite)
    body: bytes = ET.tostring(root, encoding="utf-8", short_empty_elements=True)
    return b'<?xml version="1.0" encoding="utf-8"?>' + body.removeprefix(b"<?xml version='1.0' encoding='utf-8'?>\n")


def write_junit(path: Path, report: RunReport, cases: Sequence[JunitCase],
                collection_errors: Sequence[CollectionError] = (), *, rootpath: Path | None = None) -> None:
    from ..report.write import write_atomic

    write_atomic(path, junit_xml(report, cases, collection_errors, rootpath=rootpath))
