"""Built-in deterministic metrics: the ``METRICS`` list the registry loads.

Definitions, sources and edge cases: ``docs/metrics.md``. Every metric is a pure function of a
:class:`~pytest_mirage.metrics.base.Sample` in [0, 1] (``invalid_citations`` is a count), raising
``NotApplicable`` when it cannot be computed for the case (it is then null, never 0).
"""

from __future__ import annotations

import math
from dataclasses import replace

from .base import Metric, MetricFn, NotApplicable, Sample, builtin_registry, register_builtin
from .citations import citation_map, citation_precision, citation_recall, invalid_citations
from .language import english_share, language_match
from .offline_judge import faithfulness_judge, model_source
from .overlap import bleu, char3_recall, chrf, rouge_l, token_f1
from .retrieval import file_hit_at_k, hit_at_k, mrr_at_k, precision_at_k
from .support import faithfulness_metric, support_lexical, support_lexical_uncited
from .verdicts import faithfulness_lexical, refusal, support_facts, support_sentences

UNIT = (0.0, 1.0)


def _m(fn: MetricFn, source: str, *, higher_is_better: bool = True,
       bounds: tuple[float, float] | None = UNIT) -> Metric:
    return Metric(fn.__name__, fn, higher_is_better=higher_is_better,
                  description=" ".join((fn.__doc__ or "").split()), source=source, bounds=bounds)


_SUPPORT = _m(support_lexical, "pytest-mirage (lexical analogue of MIRAGE-Bench §4.1 support)")
_FAITHFULNESS_LEXICAL = _m(faithfulness_lexical, "pytest-mirage (mean of support_sentences and support_facts)")
# the trained offline judge (metrics/offline_judge.py); computed when selected or named in a rule
_FAITHFULNESS_JUDGE = replace(_m(faithfulness_judge, model_source()), default=False)
# the offline signal plain `faithfulness` resolves to when no LLM or NLI judge is configured (its
# held-out figures in docs/judges.md; faithfulness_lexical stays available by name)
_FAITHFULNESS_DEFAULT = _FAITHFULNESS_JUDGE


def truncated(s: Sample) -> float:
    """1 when the model's answer was cut at its output limit (max_tokens), else 0 (lower is better):
    gate on it (``truncated.mean <= 0``) or raise the limit."""
    return 1.0 if s.answer.truncated else 0.0

METRICS: list[Metric] = [
    # language
    _m(language_match, "feature of MIRAGE-Bench §4.1; calibrated decision of pytest-mirage "
                       "(scoring='mirage': MIRAGE-Bench's code, langdetect / lingua for Yoruba)"),
    _m(english_share, "feature of MIRAGE-Bench §4.1; English share of the running text "
                      "(scoring='mirage': MIRAGE-Bench's code)", higher_is_better=False),
    # overlap with the reference answers
    _m(bleu, "Papineni et al. 2002; sacrebleu (Post 2018)"),
    _m(chrf, "Popović 2015; sacrebleu"),
    _m(rouge_l, "Lin 2004; rouge-score"),
    _m(char3_recall, "QTT-RAG (character 3-gram recall, after Chirkova et al. 2024)"),
    _m(token_f1, "SQuAD answer F1 (Rajpurkar et al. 2016)"),
    # citations
    _m(citation_recall, "MIRAGE-Bench §4.1, Appendix A (trec_eval recall_10; robust parser, or "
                        "MIRAGE-Bench's with scoring='mirage')"),
    _m(citation_map, "MIRAGE-Bench §4.1, Appendix A (trec_eval map_cut_10; robust parser, or "
                     "MIRAGE-Bench's with scoring='mirage')"),
    _m(citation_precision, "pytest-mirage (id-level precision of the cited ids)"),
    _m(invalid_citations, "pytest-mirage", higher_is_better=False, bounds=(0.0, math.inf)),
    # retrieval (retrieval mode only)
    _m(hit_at_k, "Khmer RAG study (Hit Rate@k)"),
    _m(file_hit_at_k, "Khmer RAG study (File Hit Rate@k)"),
    _m(mrr_at_k, "Khmer RAG study (MRR@k)"),
    _m(precision_at_k, "Khmer RAG study (Precision@k)"),
    # faithfulness
    _SUPPORT,
    _m(support_lexical_uncited, "pytest-mirage"),
    _m(support_facts, "pytest-mirage (numbers, dates, names and negations supported by the cited passages)"),
    _m(support_sentences, "pytest-mirage (sentence verdicts: weakest and mean sentence support; docs/metrics.md)"),
    _FAITHFULNESS_LEXICAL,
    _FAITHFULNESS_JUDGE,
    faithfulness_metric(_FAITHFULNESS_DEFAULT),
    Metric("refusal", refusal, higher_is_better=False, description=" ".join((refusal.__doc__ or "").split()),
           source="pytest-mirage (refusal phrases of 19 languages; computed when a rule names it)", default=False,
           bounds=UNIT),
    # generation
    Metric("truncated", truncated, higher_is_better=False, description=" ".join((truncated.__doc__ or "").split()),
           source="pytest-mirage (the answer hit max_tokens; computed when a rule names it)", default=False,
           bounds=UNIT),
]


def _model_level(sample: Sample) -> float:
    raise NotApplicable("a model-level metric: computed once per suite x language x model at session end")


# Model-level metrics from the surrogate judge (MIRAGE §4.3), usable in gates: "surrogate_rank <= 3".
MODEL_METRICS = (
    Metric("surrogate_score", _model_level, True, "Surrogate-judge predicted Bradley-Terry strength of the model "
           "from its mean heuristic features (a trained surrogate must exist next to the suite)",
           "MIRAGE-Bench §4.3", default=False, scope="model"),
    Metric("surrogate_rank", _model_level, False, "Rank of the model among the surrogate's training models plus "
           "the models under test (1 = best)", "MIRAGE-Bench §4.3", default=False, scope="model",
           bounds=(1.0, math.inf)),
)


register_builtin((*METRICS, *MODEL_METRICS))

__all__ = ["METRICS", "MODEL_METRICS", "builtin_registry"]
