"""The session end, pure of pytest: from stored case results, the settings and the suites to a
:class:`~pytest_mirage.report.model.RunReport` (reference systems, arena, gates, baseline, PPI),
then the files the user asked for.

:func:`finish` is the one entry point: the pytest controller calls it at ``pytest_sessionfinish``
with what its items and workers sent (:mod:`pytest_mirage.pytest.wire`), and a later ``merge`` of
stored results calls the same function.
"""

from __future__ import annotations

from .report import Finished, FinishInput, finish

__all__ = ["FinishInput", "Finished", "finish"]
