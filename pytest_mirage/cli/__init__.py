"""The ``python -m pytest_mirage`` commands (new-suite, make-runs, selfcheck), pure of pytest."""
