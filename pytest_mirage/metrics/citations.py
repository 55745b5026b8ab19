"""Citation metrics (MIRAGE-Bench §4.1 and Appendix A) with trec_eval semantics.

Default scoring: the "run" of a case is the ids the answer cites (as parsed by
:func:`pytest_mirage.prompts.find_citations` from the whole output), in order of first appearance
(rank 1 = first cited). ``scoring="mirage"``: the run MIRAGE-Bench's evaluation code builds
(:func:`pytest_mirage.metrics.mirage.citation_run`: first paragraphs of Reason and Answer, ranked by
last occurrence). An answer that cites nothing has an empty run: recall and MAP are 0, as in trec_eval.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from .base import NotApplicable, Sample

CITATION_CUTOFF = 10  # MIRAGE reports MAP@10 and Recall@10


def recall_at(run: Sequence[str], relevant: Collection[str], k: int) -> float:
    """trec_eval ``recall_k``: relevant ids among the first ``k`` of the run / all relevant ids."""
    rel = set(relevant)
    return len(rel.intersection(run[:k])) / len(rel)


def average_precision_at(run: Sequence[str], relevant: Collection[str], k: int) -> float:
    """trec_eval ``map_cut_k``: sum of precision at each relevant rank <= k, divided by the number
    of relevant ids (relevant ids never retrieved count as precision 0)."""
    rel = set(relevant)
    hits = 0
    total = 0.0
    for rank, doc in enumerate(run[:k], start=1):
        if doc in rel:
            hits += 1
            total += hits / rank
    return total / len(rel)


def _relevant(s: Sample) -> tuple[str, ...]:
    if not s.case.relevant:
        raise NotApplicable("case has no relevant passage ids")
    return s.case.relevant


def _run(s: Sample) -> list[str]:
    if s.scoring == "mirage":
        from .mirage import citation_run, judged_ids

        return citation_run(s.answer.output, judged_ids(s))
    if s.answer.citations is None:
        raise NotApplicable("the answer carries no citation data")
    return list(dict.fromkeys(s.answer.citations))  # order of first appearance


def _all_cited(s: Sample) -> list[str]:
    """Every distinct cited token: parsed ids and the tokens that named no passage (the robust
    parser's, whatever the scoring: MIRAGE-Bench has no citation precision)."""
    if s.answer.citations is None:
        raise NotApplicable("the answer carries no citation data")
    return list(dict.fromkeys([*s.answer.citations, *s.answer.invalid_citations]))


def citation_recall(s: Sample) -> float:
    """Recall@10 of the cited ids against the case's relevant ids (trec_eval ``recall_10``)."""
    relevant = _relevant(s)
    return recall_at(_run(s), relevant, CITATION_CUTOFF)


def citation_map(s: Sample) -> float:
    """MAP@10 of the cited ids in order of first appearance (trec_eval ``map_cut_10``)."""
    relevant = _relevant(s)
    return average_precision_at(_run(s), relevant, CITATION_CUTOFF)


def citation_precision(s: Sample) -> float:
    """Share of the distinct cited ids (invalid ones included) that are relevant."""
    rel = set(_relevant(s))
    cited = _all_cited(s)
    if not cited:
        raise NotApplicable("the answer cites nothing (citation_recall is 0)")
    return sum(c in rel for c in cited) / len(cited)


def invalid_citations(s: Sample) -> float:
    """Number of distinct cited ids that are not passages of the context the generator saw
    (lower is better)."""
    if not s.context:
        raise NotApplicable("the generator saw no passages, so no citation can be checked")
    known = {p.id for p in s.context}
    return float(sum(c not in known for c in _all_cited(s)))
