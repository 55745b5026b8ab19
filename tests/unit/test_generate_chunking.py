"""Corpus reading, chunking, sampling and near-duplicates of generate-suite (suites/chunking.py)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from pytest_mirage.errors import ConfigError
from pytest_mirage.suites.chunking import (
    Document,
    chunk_document,
    html_text,
    jaccard,
    near_duplicates,
    normalize_question,
    paragraphs,
    read_chunk_lines,
    read_corpus,
    read_documents,
    safe_doc_id,
    sample_passages,
    trigrams,
    word_count,
)
from pytest_mirage.suites.model import Passage


def test_word_count_is_script_aware() -> None:
    assert word_count("Hello, world! 42 --") == 3
    # 4 Khmer letters (the vowel signs and the coeng are marks, not letters) / 3.1 letters per word
    assert word_count("ភ្នំពេញ") == pytest.approx(4 / 3.1)
    assert word_count("東京は日本") == pytest.approx(4 / 1.4 + 1 / 2.7)  # 4 Han, 1 kana
    assert word_count("กรุงเทพ") == pytest.approx(6 / 3.8)  # 6 Thai letters and 1 mark
    assert word_count("4G ភ្នំពេញ") == pytest.approx(1 + 4 / 3.1)
    assert word_count("서울 은 크다") == 3  # Hangul is written with spaces


def test_paragraphs_split_at_blank_lines_and_headings() -> None:
    text = "# Title\nfirst line\nsecond line\n\n\n  \nnext para\n## Sub\nafter"
    assert paragraphs(text) == ["Title", "first line second line", "next para", "Sub", "after"]


def test_chunks_pack_paragraphs_and_split_long_ones_at_sentences() -> None:
    doc = Document("d", "One two three.\n\nFour five six. Seven eight nine ten. Eleven.\n\nTwelve", "en", "x")
    chunks = chunk_document(doc, max_words=5)
    assert [c.text for c in chunks] == ["One two three.", "Four five six.", "Seven eight nine ten. Eleven.", "Twelve"]
    assert [c.id for c in chunks] == ["d#0", "d#1", "d#2", "d#3"] and {c.doc for c in chunks} == {"d"}
    assert chunk_document(doc, max_words=5) == chunks  # deterministic
    # paragraphs that fit together share a chunk, one per line
    assert [c.text for c in chunk_document(doc, max_words=100)] == [
        "One two three.\nFour five six. Seven eight nine ten. Eleven.\nTwelve"]
    # a sentence longer than the limit is cut at words
    long = Document("l", " ".join(f"w{i}" for i in range(12)) + ".", "en", "x")
    assert [len(c.text.split()) for c in chunk_document(long, max_words=5)] == [5, 5, 2]
    with pytest.raises(ConfigError, match="--max-words"):
        chunk_document(doc, max_words=0)


def test_chunks_of_scripts_without_spaces() -> None:
    zh = Document("z", "第一句话在这里。第二句话也在这里。第三句。", "zh", "x")
    chunks = chunk_document(zh, max_words=6)  # 7 Han letters = 5 words per sentence
    assert [c.text for c in chunks] == ["第一句话在这里。", "第二句话也在这里。", "第三句。"]
    assert [c.text for c in chunk_document(zh, max_words=100)] == ["第一句话在这里。第二句话也在这里。第三句。"]
    km = Document("k", "ក" * 40, "km", "x")  # one unbroken run of 40 letters = 12.9 words
    pieces = chunk_document(km, max_words=5)
    assert "".join(c.text for c in pieces) == "ក" * 40 and all(word_count(c.text) <= 5 for c in pieces)


def test_html_text_drops_scripts_and_keeps_paragraphs() -> None:
    text, title = html_text("<html><head><title> The  page </title><style>p{}</style></head><body>"
                            "<script>var x = 1;</script><h1>Head</h1><p>One &amp; two</p><div>three<br>four</div>"
                            "</body></html>")
    assert title == "The page"
    assert paragraphs(text) == ["Head", "One & two", "three", "four"]
    assert html_text("<h1>Only</h1><p>x</p>")[1] == "Only"


def test_read_documents(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "guide.km.md").write_text("# ការណែនាំ\n\nអត្ថបទ", encoding="utf-8")
    (tmp_path / "sub" / "my file.txt").write_text("plain text", encoding="utf-8")
    (tmp_path / "page.html").write_text("<title>T</title><p>html text</p>", encoding="utf-8")
    (tmp_path / "empty.txt").write_text("  \n", encoding="utf-8")
    (tmp_path / "notes.csv").write_text("ignored", encoding="utf-8")
    docs = read_documents(tmp_path, "en")
    assert [(d.id, d.lang, d.title) for d in docs] == [("guide", "km", "ការណែនាំ"), ("page", "en", "T"),
                                                       ("sub/my-file", "en", "my file")]
    with pytest.raises(ConfigError, match=r"sub/my file\.txt: no language: .*pass --lang CODE"):
        read_documents(tmp_path / "sub", None)
    (tmp_path / "my file.txt").write_text("x", encoding="utf-8")
    (tmp_path / "my,file.txt").write_text("y", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"my,file\.txt: its document id 'my-file' is also that of .*my file\.txt; "
                                          "rename one"):
        read_documents(tmp_path, "en")
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "latin1.txt").write_bytes("café".encode("latin-1"))
    with pytest.raises(ConfigError, match=r"latin1\.txt: not UTF-8 \(byte 3\); save the file as UTF-8"):
        read_documents(bad, "en")
    (bad / "latin1.txt").write_text("line one\nline\x00two", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"latin1\.txt:2: the text contains U\+0000 \(NUL\) at position 14"):
        read_documents(bad, "en")
    with pytest.raises(ConfigError, match=r"no \.txt, \.md or \.html file"):
        read_documents(bad / "nothing", "en")


def test_safe_doc_id() -> None:
    assert safe_doc_id("a b[c],d;e#f") == "a-b-c--d-e-f"
    long = safe_doc_id("x" * 300)
    assert len(long) == 173 and long.startswith("x" * 160 + "-")


def test_read_chunk_lines_validates_each_line(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"

    def lines(*objs: object) -> Path:
        path.write_text("".join((o if isinstance(o, str) else json.dumps(o)) + "\n" for o in objs), encoding="utf-8")
        return path

    ok = read_chunk_lines(lines({"id": "a#0", "text": "x", "lang": "hi"}, "", {"id": "b", "doc": "B", "text": "y"}), "en")
    assert ok == [Passage("a#0", "x", None, "a", "hi"), Passage("b", "y", None, "B", "en")]
    cases = [
        ({"id": "a", "txt": "x"}, "c.jsonl:1: unknown key 'txt'; expected id, doc, text, title, lang. Did you mean: text?"),
        ({"id": "a b", "text": "x"}, "c.jsonl:1: field 'id': 'a b' contains ' '"),
        ({"id": "a", "text": ""}, "c.jsonl:1: field 'text': found ''; expected a non-empty string"),
        ({"id": "a", "text": "x", "lang": "EN"}, "c.jsonl:1: field 'lang': language codes are lowercase"),
        ("[1]", "c.jsonl:1: found a JSON list; expected an object"),
        ({"id": "a", "text": "x\u001b[2J"}, "c.jsonl:1: field 'text' contains U+001B (ESC) at position 2"),
        ("{bad", "c.jsonl:1: not a JSON object"),
    ]
    for obj, message in cases:
        with pytest.raises(ConfigError) as err:
            read_chunk_lines(lines(obj), "en")
        assert message in str(err.value), (message, str(err.value))
    with pytest.raises(ConfigError, match=r"c\.jsonl:2: field 'id': 'a' is also the id of line 1"):
        read_chunk_lines(lines({"id": "a", "text": "x"}, {"id": "a", "text": "y"}), "en")
    with pytest.raises(ConfigError, match=r"c\.jsonl:1: field 'lang': missing and no --lang given"):
        read_chunk_lines(lines({"id": "a", "text": "x"}), None)
    with pytest.raises(ConfigError, match="--lang: found 'english'"):
        read_corpus(path, "english")
    with pytest.raises(ConfigError, match="no such file or folder"):
        read_corpus(tmp_path / "missing.jsonl", "en")


def _chunks(docs: int, per: int) -> list[Passage]:
    return [Passage(f"d{d}#{i}", " ".join(["word"] * (20 + i)), None, f"d{d}", "en")
            for d in range(docs) for i in range(per)]


def test_sampling_is_seeded_with_a_cap_per_document() -> None:
    chunks = _chunks(5, 6)
    a = sample_passages(chunks, 12, 2, seed=0)
    assert len(a) == 10  # 5 documents x 2
    assert max(sum(c.doc == f"d{d}" for c in a) for d in range(5)) == 2
    assert a == sample_passages(chunks, 12, 2, seed=0)
    assert [c.id for c in a] != [c.id for c in sample_passages(chunks, 12, 2, seed=1)]
    assert len(sample_passages(chunks, 3, 5, seed=0)) == 3
    # the order is random.Random(seed).shuffle of the eligible chunks
    eligible = [c for c in chunks if len(c.text.split()) >= 23]
    random.Random(7).shuffle(eligible)
    assert sample_passages(chunks, 100, 100, seed=7, min_words=23) == eligible
    with pytest.raises(ConfigError, match="--n and --per-doc must be >= 1"):
        sample_passages(chunks, 0, 1, seed=0)


def test_trigram_jaccard() -> None:
    assert normalize_question("  Where IS the Café?! ") == "where is the café"
    assert trigrams("ab!cd") == frozenset({"ab ", "b c", " cd"})
    assert jaccard(trigrams("abcd"), trigrams("abce")) == pytest.approx(1 / 3)  # {abc,bcd} vs {abc,bce}
    assert jaccard(frozenset(), frozenset()) == 1.0


def test_near_duplicates_agree_with_all_pairs() -> None:
    rng = random.Random(3)
    words = "what when does the ferry ticket cost for adults children island guide open close".split()
    texts = [" ".join(rng.choice(words) for _ in range(rng.randint(2, 8))) for _ in range(300)]
    for t in (0.3, 0.6, 0.8, 1.0):
        kept: list[int] = []
        expected: list[tuple[int, float] | None] = []
        for i, text in enumerate(texts):
            match = next(((j, s) for j in kept if (s := jaccard(trigrams(text), trigrams(texts[j]))) >= t), None)
            expected.append(match)
            if match is None:
                kept.append(i)
        assert near_duplicates(texts, t) == expected
    assert near_duplicates(["How much is a ticket?", "How much is a ticket ?", "Who runs it?"], 0.8) == [
        None, (0, 1.0), None]
    with pytest.raises(ConfigError, match=r"expected a number in \(0, 1\]"):
        near_duplicates(["a"], 0)
