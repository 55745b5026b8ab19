"""Every built-in default, defined once (options, settings, the engine and the arena read them here)."""

from __future__ import annotations

DEFAULT_MODEL = "extractive"
CONCURRENCY = 16  # simultaneous requests per API model
CACHE_MODE = "use"
CACHE_MODES: tuple[str, ...] = ("use", "refresh", "off", "replay-only")  # --mirage-cache-mode
CACHE_SUBDIR = ".pytest_cache/mirage"  # relative to the rootdir
SEED = 0
JUDGE_QUERIES = 100  # queries judged per suite x language in the arena
JUDGE_ORDER = "both"
TOURNAMENTS = 200  # bootstrap tournaments of the arena
MIN_TOURNAMENTS = 10
RETRIEVAL_K = 3  # cut-off of retrieval metrics and size of the harness's retrieved context
ALPHA = 0.05  # significance level of regression gates and head-to-head tests
# target precision of flagging unfaithful answers in the calibration against human labels: the
# report names the threshold of each faithfulness signal that reaches it (docs/judges.md)
CALIBRATION_PRECISION = 0.9
# the threshold a faithfulness signal's flags are counted at when no case threshold names it
# (faithfulness_judge: its model file's own, 0.4 for the shipped model)
SIGNAL_THRESHOLD = 0.5
PAIRED_TEST = "t"  # the paired test of baseline comparisons
TEST_METHODS: tuple[str, ...] = ("t", "sign_flip")  # --mirage-paired-test
BOOTSTRAP_RESAMPLES = 1000  # bootstrap resamples of intervals and paired comparisons
REPEAT = 1  # samples per case
# the metric definitions: the robust default, or MIRAGE-Bench's evaluation code reproduced
SCORING_MODES: tuple[str, ...] = ("default", "mirage")
