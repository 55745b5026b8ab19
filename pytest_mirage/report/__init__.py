"""Aggregation of case results, gates, leaderboard lines and the versioned JSON report."""

from .aggregate import GateResult, LeaderboardRow, aggregate_gates, leaderboard
from .html import html_report
from .json_report import SCHEMA, build_report, write_report
from .markdown import markdown_report
from .render import write_extra_reports

__all__ = ["SCHEMA", "GateResult", "LeaderboardRow", "aggregate_gates", "build_report", "html_report",
           "leaderboard", "markdown_report", "write_extra_reports", "write_report"]
