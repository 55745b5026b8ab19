"""Aggregation of case results, gates, leaderboard lines and the versioned JSON report."""

from .aggregate import GateResult, LeaderboardRow, aggregate_gates, leaderboard
from .json_report import SCHEMA, build_report, write_report

__all__ = ["SCHEMA", "GateResult", "LeaderboardRow", "aggregate_gates", "build_report", "leaderboard",
           "write_report"]
