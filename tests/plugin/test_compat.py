"""The internals of pytest and pytest-xdist that pytest_mirage/pytest/compat.py reads still work.

Under xdist a worker answers the items queued for it in one engine call; when xdist's internals
change, compat falls back to one item at a time. This test fails loudly when that happens, by
counting how many engine calls a worker made for its items.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("xdist")

CONFTEST = '''
import pytest_mirage.engine.scheduler as scheduler

_real = scheduler.run_requests
calls = []

def counting(adapter, requests, settings=None):
    calls.append(len(requests))
    return _real(adapter, requests, settings)

def pytest_configure(config):
    import pytest_mirage.evaluate.answering as answering
    answering.run_requests = counting

def pytest_sessionfinish(session):
    if hasattr(session.config, "workerinput"):
        with open(f"calls-{session.config.workerinput['workerid']}.txt", "w") as fh:
            fh.write(" ".join(map(str, calls)))
'''


def test_xdist_workers_answer_their_queued_items_in_few_engine_calls(pytester: pytest.Pytester,
                                                                      demo_suite: Path) -> None:
    pytester.makeconftest(CONFTEST)
    res = pytester.runpytest_subprocess("demo", "-n", "2", "-p", "no:cacheprovider")
    res.assert_outcomes(passed=6)
    batches = [int(x) for f in pytester.path.glob("calls-gw*.txt") for x in f.read_text().split()]
    assert sum(batches) == 6, batches  # every item answered once, by exactly one worker
    # one engine call per item would mean xdist's queue is no longer readable (see compat.py)
    assert max(batches) > 1, f"each worker answered one item per engine call: {batches}"


def test_capture_disabled_lets_output_reach_the_terminal(pytester: pytest.Pytester) -> None:
    # pytest's CaptureManager.global_and_fixture_disabled (pytest 8.0-9.0): the progress bar of model
    # calls is written while an item's output is captured
    pytester.makepyfile(test_x='''
        from pytest_mirage.pytest.compat import capture_disabled

        def test_x(request):
            print("CAPTURED-LINE")
            with capture_disabled(request.config):
                print("LIVE-LINE")
    ''')
    res = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    res.assert_outcomes(passed=1)
    assert "LIVE-LINE" in res.stdout.str()
    assert "CAPTURED-LINE" not in res.stdout.str()


def test_count_in_terminal_stats_reaches_the_summary_line(pytester: pytest.Pytester) -> None:
    # TerminalReporter.stats (pytest 8.0-9.0): a report counted after the progress line has ended
    pytester.makeconftest('''
        import pytest
        from pytest_mirage.pytest.compat import count_in_terminal_stats

        def pytest_sessionfinish(session):
            terminal = session.config.pluginmanager.get_plugin("terminalreporter")
            rep = pytest.TestReport(nodeid="extra::gate", location=("x", None, "gate"), keywords={},
                                    outcome="failed", longrepr="gate failed", when="call")
            count_in_terminal_stats(terminal, "failed", rep)
    ''')
    pytester.makepyfile(test_x="def test_x():\n    assert True\n")
    res = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    res.stdout.fnmatch_lines(["*1 failed, 1 passed*"])
