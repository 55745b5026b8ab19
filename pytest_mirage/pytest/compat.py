"""The one place that reads pytest's or another plugin's internals, each with the versions it is
known to work on and a test (``tests/plugin/test_compat.py``) that fails loudly when it stops working.

* :func:`xdist_queued_items` — pytest-xdist 3.5-3.8 (``WorkerInteractor.torun``, ``nextitem_index``):
  which items xdist has queued for this worker. No public API exists; answering the queued items of
  a model in one engine call is what makes a worker batch its model calls. When the internals
  change it returns ``[]`` and every item is answered on its own (correct, only slower).
* :func:`capture_disabled` — pytest 8.0-9.0 (``CaptureManager.global_and_fixture_disabled``): the
  progress bar of model calls reaches the terminal while an item's output is captured.
* :func:`count_in_terminal_stats` — pytest 8.0-9.0 (``TerminalReporter.stats``): a gate's test
  report counted in the summary line ("2 failed") without a progress character after the progress
  line has ended.
* :func:`continue_after_collection_errors` — pytest 8.0-9.0 (``config.option``): a broken suite is
  a collection error of that suite only; the other suites still run.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any


def xdist_queued_items(config: Any, items: list[Any]) -> list[Any]:
    """The items queued for this xdist worker, the next one first (``[]`` when unknown)."""
    for plugin in config.pluginmanager.get_plugins():
        torun = getattr(plugin, "torun", None)
        if torun is None or not hasattr(torun, "lock") or not hasattr(plugin, "nextitem_index"):
            continue
        try:
            with torun.lock() as queue:
                idx = [i for i in queue if isinstance(i, int)]
        except Exception:  # an internal that changed shape: fall back to one item at a time
            return []
        nxt = plugin.nextitem_index
        if isinstance(nxt, int):
            idx.insert(0, nxt)
        return [items[i] for i in idx if 0 <= i < len(items)]
    return []


@contextlib.contextmanager
def capture_disabled(config: Any) -> Iterator[None]:
    """Output capture suspended (global and fixture-level) inside the block, when pytest captures."""
    capman = config.pluginmanager.getplugin("capturemanager")
    disabled = getattr(capman, "global_and_fixture_disabled", None) if capman is not None else None
    if disabled is None:
        yield
        return
    with disabled():
        yield


def count_in_terminal_stats(terminal: Any, category: str, report: Any) -> None:
    """Count ``report`` under ``category`` in the terminal reporter's summary statistics."""
    stats = getattr(terminal, "stats", None)
    if isinstance(stats, dict):
        stats.setdefault(category, []).append(report)


def continue_after_collection_errors(config: Any) -> None:
    """Let the session run although some collectors failed (what ``--continue-on-collection-errors`` does)."""
    config.option.continue_on_collection_errors = True
