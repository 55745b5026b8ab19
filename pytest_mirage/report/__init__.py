"""The report of a run: the typed :class:`~.model.RunReport`, the leaderboard, and its renderings
(terminal lines, JSON, Markdown, HTML). Submodules are imported explicitly."""
