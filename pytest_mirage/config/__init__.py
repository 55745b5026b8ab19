"""Configuration: the option table (:mod:`.options`), each default once (:mod:`.defaults`) and the
resolved, validated settings of a run with the source of every value (:mod:`.settings`).

A leaf of the package: importing it loads no engine, statistics, numpy, asyncio or sqlite3
(``tests/plugin/test_activation.py`` checks)."""
