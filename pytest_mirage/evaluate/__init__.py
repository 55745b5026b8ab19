"""Per item, pure of pytest, in the order data flows.

* :mod:`.context`: what a run is configured with (settings, registries, adapters, suites, rules);
* :mod:`.requests` and :mod:`.answering`: the requests of a process's items, answered once per model;
* :mod:`.case`: one item, answer -> metrics -> thresholds -> :class:`~pytest_mirage.results.CaseResult`;
* :mod:`.judging`: the model-backed judges' phase of the items of a process;
* :mod:`.checks`: the same path for a team's own test (``mirage.check``);
* :mod:`.retriever`: the harness's BM25 retriever over a suite corpus.

The session end is :mod:`pytest_mirage.finish`.
"""
