"""Suite statistics (MIRAGE Table 1 style) and sample-size warnings for thin languages."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from ..stats.power import DEFAULT_SIGMA, MIN_OBSERVED, MIN_SIGMA, cases_needed
from ..suites.model import Case, Suite
from ..text.tokenize import tokenize

DEFAULT_DROP = 0.05


@dataclass(frozen=True, slots=True)
class LangStats:
    suite: str
    lang: str
    queries: int
    avg_question_tokens: float
    relevant_per_query: float
    nonrelevant_per_query: float
    needed: int
    sigma: float
    sigma_source: str


def suite_stats(suites: Iterable[tuple[Suite, Sequence[Case]]],
                observed_sigma: Mapping[tuple[str, str], float] | None = None) -> list[LangStats]:
    """Per suite x language statistics of the selected cases.

    In retrieval mode "non-relevant per query" counts the corpus chunks that are not relevant,
    which is what the retriever has to rank below the relevant ones.
    """
    out: list[LangStats] = []
    for suite, cases in suites:
        by_lang: dict[str, list[Case]] = defaultdict(list)
        for c in cases:
            by_lang[c.lang].append(c)
        for lang in sorted(by_lang):
            cs = by_lang[lang]
            n = len(cs)
            toks = sum(len(tokenize(c.question, lang)) for c in cs) / n
            rel = sum(len(c.relevant) for c in cs) / n
            if suite.mode == "oracle":
                nonrel = sum(len([p for p in c.passages if p.id not in set(c.relevant)]) for c in cs) / n
            else:
                size = len([p for p in suite.corpus or () if p.lang in (None, lang)])
                nonrel = sum(size - len(c.relevant) for c in cs) / n
            sigma = (observed_sigma or {}).get((suite.name, lang)) if n >= MIN_OBSERVED else None
            src = "observed" if sigma is not None else "assumed"
            sigma = DEFAULT_SIGMA if sigma is None else max(sigma, MIN_SIGMA)
            out.append(LangStats(suite.name, lang, n, toks, rel, nonrel, cases_needed(DEFAULT_DROP, sigma), sigma, src))
    return out


def stats_lines(rows: Sequence[LangStats], drop: float = DEFAULT_DROP) -> list[str]:
    lines: list[str] = []
    suite = None
    for r in rows:
        if r.suite != suite:
            suite = r.suite
            lines.append(f"suite {suite}")
            lines.append(f"  {'lang':<6}{'queries':>8}{'q_tokens':>10}{'rel/q':>8}{'nonrel/q':>10}{'needed':>8}")
        lines.append(f"  {r.lang:<6}{r.queries:>8}{r.avg_question_tokens:>10.1f}{r.relevant_per_query:>8.2f}"
                     f"{r.nonrelevant_per_query:>10.2f}{r.needed:>8}")
    thin = [r for r in rows if r.queries < r.needed]
    if thin:
        lines.append(f"thin languages: a gate's bootstrap CI needs about n cases to detect a {drop * 100:.0f}-point drop "
                     "of a mean (95% confidence, 80% power, n = ((1.96 + 0.84) * sigma / drop)^2):")
        for r in thin:
            lines.append(f"  WARNING {r.suite} [{r.lang}]: {r.queries} cases < {r.needed} needed "
                         f"(sigma {r.sigma:.2f}, {r.sigma_source})")
    return lines
