"""The one place that reads another plugin's internals: which items xdist has queued for this worker.

pytest-xdist has no public API for it. Answering the queued items of a model in one engine call is
what makes a worker batch its model calls; when xdist's internals change, :func:`xdist_queued_items`
returns ``[]`` and every item is answered on its own (correct, only slower).
``tests/plugin/test_compat.py`` fails loudly when that happens.
"""

from __future__ import annotations

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
