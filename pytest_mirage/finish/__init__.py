"""The session end, pure of pytest: from stored case results, the settings and the suites to a
:class:`~pytest_mirage.report.model.RunReport` (reference systems, arena, gates, baseline, PPI),
then the files the user asked for."""
