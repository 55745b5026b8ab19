"""Writing the report files: atomically (a temporary file renamed into place), all or nothing."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from pathlib import Path

from .model import RunReport


def json_bytes(report: RunReport) -> bytes:
    """The JSON report, UTF-8, indented, with a final newline (orjson: the report can be large)."""
    import orjson

    return orjson.dumps(report.to_json(), option=orjson.OPT_INDENT_2) + b"\n"


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same folder and a rename, so a
    reader (or a killed run) never sees a partial file; parent folders are created."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp creates 0600; a report is as readable as any file
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def render_outputs(report: RunReport, *, json_path: Path | None, markdown: Path | None,
                   html: Path | None) -> list[tuple[Path, bytes]]:
    """Every requested file's content, rendered before anything is written."""
    from .html import html_report
    from .markdown import markdown_report

    out: list[tuple[Path, bytes]] = []
    if json_path is not None:
        out.append((json_path, json_bytes(report)))
    if markdown is not None:
        out.append((markdown, markdown_report(report).encode("utf-8")))
    if html is not None:
        out.append((html, html_report(report).encode("utf-8")))
    return out


def write_outputs(files: Sequence[tuple[Path, bytes]]) -> tuple[list[Path], list[str]]:
    """Write each file atomically; returns the paths written and one problem per file not written."""
    written: list[Path] = []
    problems: list[str] = []
    for path, data in files:
        try:
            write_atomic(path, data)
        except OSError as exc:
            problems.append(f"cannot write {path}: {exc.strerror or exc}")
        else:
            written.append(path)
    return written, problems


def remove_stale(paths: Sequence[Path | None]) -> list[str]:
    """Remove report files of an earlier run at session start, so a run that dies leaves none that
    could be mistaken for its own; returns one problem per file that could not be removed."""
    problems = []
    for path in paths:
        if path is None:
            continue
        try:
            path.unlink()
        except FileNotFoundError:
            pass
        except OSError as exc:
            problems.append(f"cannot remove the report of an earlier run {path}: {exc.strerror or exc}")
    return problems
