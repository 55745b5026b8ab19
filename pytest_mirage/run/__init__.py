"""One run of pytest-mirage, pure of pytest, in the order data flows.

* :mod:`.context`: what a run is configured with (settings, registries, adapters, suites, rules);
* :mod:`.requests` and :mod:`.answering`: the requests of a process's items, answered once per model;
* :mod:`.evaluate`: one item, answer -> metrics -> thresholds -> :class:`~pytest_mirage.results.CaseResult`;
* :mod:`.finish`: the session end (reference systems, arena, gates, outcome) -> a
  :class:`~pytest_mirage.report.model.RunReport`.
"""
