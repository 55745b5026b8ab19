"""The ``python -m pytest_mirage`` commands (new-suite, make-runs, self-check), pure of pytest."""
