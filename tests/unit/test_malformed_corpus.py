"""Every suite under fixtures/malformed/ fails to load with one clear SuiteError naming file and line.

Each folder holds a broken suite and ``expected.txt``: the message fragments it must produce, one per
line. The first fragment starts with the file (relative to the folder) and the line, e.g.
``suite.toml:5: unknown table [gate]``; the test checks it against the full path.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import pytest

from pytest_mirage.errors import SuiteError
from pytest_mirage.suites.loader import load_suite

MALFORMED = Path(__file__).resolve().parents[2] / "fixtures" / "malformed"
FOLDERS = sorted(p for p in MALFORMED.iterdir() if p.is_dir())
WHERE_RE = re.compile(r"^[^\s:]+:\d+: ")


def expected(folder: Path) -> list[str]:
    return [line for line in (folder / "expected.txt").read_text(encoding="utf-8").splitlines() if line.strip()]


def test_the_corpus_is_large_and_well_formed() -> None:
    assert len(FOLDERS) >= 60
    for folder in FOLDERS:
        frags = expected(folder)
        assert frags, folder.name
        assert WHERE_RE.match(frags[0]), f"{folder.name}: the first fragment must start with FILE:LINE: ({frags[0]!r})"


@pytest.mark.parametrize("folder", FOLDERS, ids=[p.name for p in FOLDERS])
def test_malformed_suite_gives_a_clear_error(folder: Path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # data warnings (skipped queries) are not what this test is about
        with pytest.raises(SuiteError) as err:
            load_suite(folder)
    message = str(err.value)
    frags = expected(folder)
    file, _, rest = frags[0].partition(":")
    assert f"{folder / file}:{rest}" in message, message
    for frag in frags[1:]:
        assert frag in message, message
    assert "Traceback" not in message
    for line in message.splitlines():
        if not line.startswith("... and "):
            # every problem names its file and line
            assert re.match(r"^.+:\d+: ", line), line
