"""Prompts for synthetic questions and answers (ARES, Saad-Falcon et al. 2024, §3.1 and A.5–A.6).

ARES asks a generator for a query from a passage with a few-shot prompt of in-domain examples
(``Document: ... Query: ...``), then for an answer from the passage and the query (``Query: ...
Document: ... Answer: ...``); each prompt ends with the unfinished field for the model to complete.
These are those prompts, with an instruction line written in the case's language
(:data:`INSTRUCTIONS`, the 19 languages of the harness; any other language gets the English line
naming the language, and the run says so). The field labels stay ``Document:``, ``Query:``,
``Answer:`` in every language: the few-shot pattern, not the labels, carries the language, and
the reply is read after them (:func:`parse_question`, :func:`parse_answer`).

A change to the wording or layout of a prompt must change :data:`PROMPT_VERSION`: it is recorded
in every generated case, and the prompts are part of the cache key.
"""

from __future__ import annotations

import csv
import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import ConfigError, did_you_mean
from ..text.langcodes import check_lang, language_name

PROMPT_VERSION = "ares-a6/1"
MAX_PASSAGE_CHARS = 4000  # as the MIRAGE prompt (prompts.MAX_PASSAGE_CHARS)

#: (question instruction, answer instruction) per language.
INSTRUCTIONS: dict[str, tuple[str, str]] = {
    "en": ("Read the document and write one question that the document answers. Write only the question, in English.",
           "Answer the query using only the information in the document. Write only the answer, in English."),
    "de": ("Lies das Dokument und schreibe eine Frage, die das Dokument beantwortet. Schreibe nur die Frage, auf Deutsch.",
           "Beantworte die Anfrage nur mit den Informationen aus dem Dokument. Schreibe nur die Antwort, auf Deutsch."),
    "es": ("Lee el documento y escribe una pregunta que el documento responda. Escribe solo la pregunta, en español.",
           "Responde a la consulta usando solo la información del documento. Escribe solo la respuesta, en español."),
    "fr": ("Lis le document et écris une question à laquelle le document répond. Écris uniquement la question, "
           "en français.",
           "Réponds à la requête en utilisant uniquement les informations du document. Écris uniquement la réponse, "
           "en français."),
    "fi": ("Lue asiakirja ja kirjoita yksi kysymys, johon asiakirja vastaa. Kirjoita vain kysymys, suomeksi.",
           "Vastaa kysymykseen käyttäen vain asiakirjan tietoja. Kirjoita vain vastaus, suomeksi."),
    "id": ("Bacalah dokumen ini dan tulislah satu pertanyaan yang dijawab oleh dokumen tersebut. Tulis pertanyaannya "
           "saja, dalam bahasa Indonesia.",
           "Jawablah pertanyaan hanya dengan informasi dari dokumen. Tulis jawabannya saja, dalam bahasa Indonesia."),
    "sw": ("Soma hati hii na uandike swali moja ambalo hati inalijibu. Andika swali pekee, kwa Kiswahili.",
           "Jibu swali kwa kutumia taarifa zilizo kwenye hati pekee. Andika jibu pekee, kwa Kiswahili."),
    "yo": ("Ka ìwé náà kí o sì kọ ìbéèrè kan tí ìwé náà dáhùn. Kọ ìbéèrè náà nìkan, ní èdè Yorùbá.",
           "Dáhùn ìbéèrè náà nípa lílo àlàyé inú ìwé náà nìkan. Kọ ìdáhùn náà nìkan, ní èdè Yorùbá."),
    "ru": ("Прочитайте документ и напишите один вопрос, на который документ отвечает. Напишите только вопрос, "
           "на русском языке.",
           "Ответьте на запрос, используя только сведения из документа. Напишите только ответ, на русском языке."),
    "ar": ("اقرأ المستند واكتب سؤالًا واحدًا يجيب عنه المستند. اكتب السؤال فقط، باللغة العربية.",
           "أجب عن الاستفسار باستخدام المعلومات الواردة في المستند فقط. اكتب الإجابة فقط، باللغة العربية."),
    "fa": ("سند را بخوانید و یک پرسش بنویسید که سند به آن پاسخ می‌دهد. فقط پرسش را بنویسید، به فارسی.",
           "فقط با استفاده از اطلاعات سند به پرسش پاسخ دهید. فقط پاسخ را بنویسید، به فارسی."),
    "hi": ("दस्तावेज़ पढ़ें और एक ऐसा प्रश्न लिखें जिसका उत्तर दस्तावेज़ देता है। केवल प्रश्न लिखें, हिंदी में।",
           "केवल दस्तावेज़ की जानकारी का उपयोग करके प्रश्न का उत्तर दें। केवल उत्तर लिखें, हिंदी में।"),
    "bn": ("নথিটি পড়ুন এবং এমন একটি প্রশ্ন লিখুন যার উত্তর নথিটি দেয়। শুধু প্রশ্নটি লিখুন, বাংলায়।",
           "শুধু নথির তথ্য ব্যবহার করে প্রশ্নের উত্তর দিন। শুধু উত্তরটি লিখুন, বাংলায়।"),
    "te": ("పత్రాన్ని చదివి, ఆ పత్రం సమాధానం ఇచ్చే ఒక ప్రశ్నను రాయండి. ప్రశ్నను మాత్రమే రాయండి, తెలుగులో.",
           "పత్రంలోని సమాచారాన్ని మాత్రమే ఉపయోగించి ప్రశ్నకు సమాధానం ఇవ్వండి. సమాధానాన్ని మాత్రమే రాయండి, తెలుగులో."),
    "th": ("อ่านเอกสารแล้วเขียนคำถามหนึ่งข้อที่เอกสารนี้ตอบได้ เขียนเฉพาะคำถามเป็นภาษาไทย",
           "ตอบคำถามโดยใช้ข้อมูลในเอกสารเท่านั้น เขียนเฉพาะคำตอบเป็นภาษาไทย"),
    "km": ("សូមអានឯកសារ ហើយសរសេរសំណួរមួយដែលឯកសារនេះឆ្លើយ។ សរសេរតែសំណួរប៉ុណ្ណោះ ជាភាសាខ្មែរ។",
           "សូមឆ្លើយសំណួរដោយប្រើតែព័ត៌មាននៅក្នុងឯកសារ។ សរសេរតែចម្លើយប៉ុណ្ណោះ ជាភាសាខ្មែរ។"),
    "zh": ("阅读文档，写出一个文档能够回答的问题。只写问题，用中文。",
           "仅根据文档中的信息回答问题。只写答案，用中文。"),
    "ja": ("文書を読み、その文書が答えている質問を一つ書いてください。質問だけを日本語で書いてください。",
           "文書の情報だけを使って質問に答えてください。答えだけを日本語で書いてください。"),
    "ko": ("문서를 읽고 문서가 답하는 질문 하나를 작성하세요. 질문만 한국어로 작성하세요.",
           "문서의 정보만 사용하여 질문에 답하세요. 답만 한국어로 작성하세요."),
}
FALLBACK = ("Read the document and write one question that the document answers. Write only the question, "
            "in {language}.",
            "Answer the query using only the information in the document. Write only the answer, in {language}.")


def instructions(lang: str) -> tuple[str, str, bool]:
    """``(question line, answer line, localised)`` for ``lang``; not localised: the English lines
    naming the language."""
    if lang in INSTRUCTIONS:
        q, a = INSTRUCTIONS[lang]
        return q, a, True
    name = language_name(lang)
    return FALLBACK[0].format(language=name), FALLBACK[1].format(language=name), False


# ---------------------------------------------------------------- few-shot examples


@dataclass(frozen=True, slots=True)
class Example:
    """One in-domain example: a question, its answer, optionally its passage and language."""

    question: str
    answer: str
    passage: str | None = None
    lang: str | None = None


FEW_SHOT_KEYS = ("question", "answer", "passage", "lang")
# ARES's few-shot files use Query / Document / Answer columns
ALIASES = {"query": "question", "document": "passage", "language": "lang"}


def _example(row: dict[str, object], where: str) -> Example:
    fields: dict[str, str | None] = {}
    for key, value in row.items():
        name = ALIASES.get(str(key).strip().lower(), str(key).strip().lower())
        if name not in FEW_SHOT_KEYS:
            raise ConfigError(f"{where}: unknown field {key!r}; expected question, answer and optionally passage, "
                              f"lang.{did_you_mean(name, FEW_SHOT_KEYS)}")
        if value is not None and not isinstance(value, str):
            raise ConfigError(f"{where}: field {key!r}: found {value!r:.60}; expected a string")
        fields[name] = value.strip() if isinstance(value, str) else None
    for key in ("question", "answer"):
        if not fields.get(key):
            raise ConfigError(f"{where}: field {key!r} is missing or empty; every example needs a question and "
                              "its answer")
    lang = fields.get("lang") or None
    if lang is not None and (why := check_lang(lang)):
        raise ConfigError(f"{where}: field 'lang': {why}")
    return Example(str(fields["question"]), str(fields["answer"]), fields.get("passage") or None, lang)


def load_few_shot(path: Path) -> tuple[list[Example], str]:
    """The examples of a JSONL file (``{"question", "answer", "passage"?, "lang"?}`` per line) or a
    CSV/TSV file with those columns (ARES's ``Query``, ``Document``, ``Answer`` are accepted), and
    the file's SHA-256."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"--few-shot {path}: cannot be read ({exc.strerror or exc}); expected a JSONL or CSV "
                          "file of example question/answer pairs") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 (byte {exc.start}); save the file as UTF-8") from None
    examples: list[Example] = []
    if path.suffix.lower() in (".csv", ".tsv"):
        reader = csv.DictReader(text.splitlines(), delimiter="\t" if path.suffix.lower() == ".tsv" else ",")
        for row in reader:
            if None in row:
                raise ConfigError(f"{path}:{reader.line_num}: more values than the header's columns "
                                  f"({', '.join(reader.fieldnames or [])}); quote values that contain the separator")
            if any((v or "").strip() for v in row.values()):
                examples.append(_example(dict(row), f"{path}:{reader.line_num}"))
    else:
        for n, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ConfigError(f"{path}:{n}: not a JSON object ({exc.msg} at column {exc.colno}); expected one "
                                  '{"question", "answer", "passage"?} object per line (or a .csv file)') from None
            if not isinstance(obj, dict):
                raise ConfigError(f"{path}:{n}: found a JSON {type(obj).__name__}; expected an object "
                                  '{"question", "answer", "passage"?, "lang"?}')
            examples.append(_example(obj, f"{path}:{n}"))
    if not examples:
        raise ConfigError(f"{path}: no examples; expected at least 1 question/answer pair (ARES uses 5 or more)")
    return examples, hashlib.sha256(raw).hexdigest()


def examples_for(examples: Sequence[Example], lang: str) -> list[Example]:
    """The examples in ``lang`` when there are any, else all of them (in file order)."""
    own = [e for e in examples if e.lang == lang]
    return own or list(examples)


# ---------------------------------------------------------------- prompts and replies


def _trim(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_PASSAGE_CHARS else text[:MAX_PASSAGE_CHARS] + " ..."


def question_prompt(passage: str, lang: str, examples: Sequence[Example]) -> str:
    """ARES A.6 query generation: the instruction, ``Example i: Document: ... Query: ...`` blocks and
    the passage with an unfinished ``Query:``."""
    line = instructions(lang)[0]
    blocks = [line]
    for i, ex in enumerate(examples, 1):
        doc = f"Document: {_trim(ex.passage)}\n" if ex.passage else ""
        blocks.append(f"Example {i}:\n{doc}Query: {ex.question}")
    blocks.append(f"Example {len(examples) + 1}:\nDocument: {_trim(passage)}\nQuery:")
    return "\n\n".join(blocks)


def answer_prompt(passage: str, question: str, lang: str, examples: Sequence[Example]) -> str:
    """ARES A.6 answer generation: ``Example i: Query: ... Document: ... Answer: ...`` blocks and
    the query and passage with an unfinished ``Answer:``."""
    line = instructions(lang)[1]
    blocks = [line]
    for i, ex in enumerate(examples, 1):
        doc = f"Document: {_trim(ex.passage)}\n" if ex.passage else ""
        blocks.append(f"Example {i}:\nQuery: {ex.question}\n{doc}Answer: {ex.answer}")
    blocks.append(f"Example {len(examples) + 1}:\nQuery: {question}\nDocument: {_trim(passage)}\nAnswer:")
    return "\n\n".join(blocks)


# a reply that goes on with the few-shot pattern stops at the next field or example
_NEXT_FIELD = re.compile(r"^\s*(?:Example\s+\d+\s*:?|Document\s*:|Query\s*:|Answer\s*:)", re.I | re.M)
_LEAD = {"question": re.compile(r"^\s*(?:Query|Question)\s*:\s*", re.I),
         "answer": re.compile(r"^\s*Answer\s*:\s*", re.I)}
_QUOTES = "\"'“”«»「」"


def _reply(text: str, field: str) -> str:
    body = _LEAD[field].sub("", text.strip(), count=1)
    m = _NEXT_FIELD.search(body)
    if m is not None:
        body = body[:m.start()]
    body = body.strip()
    if len(body) >= 2 and body[0] in _QUOTES and body[-1] in _QUOTES:
        body = body[1:-1].strip()
    return body


# what a suite file cannot hold (NUL, ESC, lone surrogates; suites/checks.py) and other control characters
_UNPRINTABLE = re.compile("[\x00-\x08\x0b-\x1f\x7f\ud800-\udfff]")


def _usable(text: str) -> str:
    """``text`` without control characters; empty when no letter or digit is left."""
    text = _UNPRINTABLE.sub("", text).strip()
    return text if any(ch.isalnum() for ch in text) else ""


def parse_question(output: str) -> str:
    """The question in a reply: the text after an optional ``Query:`` up to the next field, on one
    line; empty when it has no letter or digit."""
    body = _reply(_UNPRINTABLE.sub("", output), "question")
    first = next((ln.strip() for ln in body.split("\n") if ln.strip()), "")
    return _usable(first)


def parse_answer(output: str) -> str:
    """The answer in a reply: the text after an optional ``Answer:`` up to the next field, lines
    joined; empty when it has no letter or digit."""
    return _usable(" ".join(_reply(_UNPRINTABLE.sub("", output), "answer").split()))
