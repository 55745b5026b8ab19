"""Files named by a manifest stay inside the suite folder.

A suite's cases, corpus, runs and prompt template are read from its own folder only: no absolute
paths, no ``..``, and no symlink that resolves outside the folder. A suite folder received from
elsewhere can then not make the loader read (and send to a model) any other file of the machine.
The data of source suites (``[source] dir``/``path``/``corpus``) may be outside the folder only
when the user allows it (:class:`Confinement`: ``--mirage-trusted-path DIR`` / ``mirage_trusted_paths``);
a suite cannot allow itself anything.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath, PureWindowsPath

from .problems import Problems

_GLOB_CHARS = frozenset("*?[")


def is_glob(pattern: str) -> bool:
    return any(ch in _GLOB_CHARS for ch in pattern)


def relative_problem(value: str) -> str | None:
    """Why ``value`` is not a path relative to the suite folder that stays inside it, or None."""
    if not value.strip():
        return "the path is empty; expected a file relative to the suite folder"
    if "\x00" in value:
        return "the path contains a NUL character"
    if PurePosixPath(value).is_absolute() or PureWindowsPath(value).is_absolute() or value.startswith("~") \
            or PureWindowsPath(value).drive:
        return (f"{value!r} is an absolute path; expected a path relative to the suite folder (a suite reads "
                "only files inside its own folder)")
    if ".." in PurePosixPath(value.replace("\\", "/")).parts:
        return (f"{value!r} leads out of the suite folder ('..'); a suite reads only files inside its own folder: "
                "copy the file into it")
    return None


def outside_problem(root: Path, path: Path) -> str | None:
    """Why ``path`` (under ``root``) is outside the suite folder once symlinks are resolved, or None."""
    try:
        resolved = path.resolve()
        base = root.resolve()
    except (OSError, RuntimeError) as exc:  # a symlink loop
        return f"{path} cannot be resolved ({exc})"
    if resolved == base or resolved.is_relative_to(base):
        return None
    return (f"{path.relative_to(root) if path.is_relative_to(root) else path} resolves to {resolved}, outside the "
            "suite folder (a symlink); copy the file into the suite folder")


def expand(root: Path, patterns: tuple[str, ...] | None, label: str, where: str, problems: Problems,
           *, required: bool) -> list[Path]:
    """The files named by ``patterns`` (files or globs relative to ``root``), in order, without repeats.

    ``label`` names the manifest key in messages (``[suite] cases``); ``where`` is its ``path:line``.
    A pattern that matches nothing is a problem when ``required`` or when it is not a glob.
    """
    if patterns is None:
        return []
    out: dict[Path, None] = {}
    for pat in patterns:
        if (err := relative_problem(pat)) is not None:
            problems.add(where, f"{label}: {err}")
            continue
        matches = sorted(root.glob(pat)) if is_glob(pat) else [root / pat]
        found = [m for m in matches if m.is_file()]
        if not found and (required or not is_glob(pat)):
            problems.add(where, f"{label}: {pat!r} matches no file under {root}")
        for m in found:
            if (err := outside_problem(root, m)) is not None:
                problems.add(where, f"{label}: {err}")
                continue
            out.setdefault(m, None)
    return list(out)


TRUST_FIX = ("--mirage-trusted-path {dir} on the command line (repeatable) or mirage_trusted_paths = {dir} in the "
             "ini file (a line list)")


def _inside(path: Path, base: Path) -> bool:
    return path == base or path.is_relative_to(base)


@dataclass(frozen=True, slots=True)
class Confinement:
    """Where the ``[source]`` data of a suite manifest may be read: inside the suite folder, or inside
    one of the folders (or files) the user allowed with ``--mirage-trusted-path`` / ``mirage_trusted_paths``.

    ``root``: the suite folder; ``trusted``: the allowed paths, resolved; ``label``: how messages name
    the source (``[source]``, ``[suite] source``). Checked when the manifest is read (each path key) and
    again for every file just before it is opened (:meth:`check`): a file under an allowed folder can
    be a symlink out of it, or be swapped for one after the first check.
    """

    root: Path
    trusted: tuple[Path, ...] = ()
    label: str = "[source]"

    def problem(self, path: Path, key: str, value: str | None = None) -> str | None:
        """Why ``path`` (named by ``key`` = ``value``) may not be read, with the fix; None when allowed."""
        try:
            resolved = path.resolve()
            base = self.root.resolve()
        except (OSError, RuntimeError) as exc:  # a symlink loop
            return f"{self.label} {key}: {path} cannot be resolved ({exc})"
        if _inside(resolved, base) or any(_inside(resolved, t) for t in self.trusted):
            return None
        # a path that is outside as written is named as written; one inside as written leads out through a
        # symlink, whose target is shown. (Nothing outside is probed to word the message.)
        lexical = Path(os.path.normpath(path.absolute()))
        linked = any(_inside(lexical, b) for b in (Path(os.path.normpath(self.root.absolute())), *self.trusted))
        target = resolved if linked else lexical
        shown = (repr(value) if value is not None else str(path)) + (f" (resolves to {resolved})" if linked else "")
        folder = value is not None and (key == "dir" or (key == "corpus"
                                                         and not target.name.endswith((".jsonl", ".jsonl.gz"))))
        allow = target if folder else target.parent
        trusted = f" and the trusted paths ({', '.join(map(str, self.trusted))})" if self.trusted else ""
        return (f"{self.label} {key}: {shown} is outside the suite folder {base}{trusted}; a suite folder is data "
                "and may not make the run read files outside it (docs/security.md). If you trust this data, "
                f"allow its folder with {TRUST_FIX.format(dir=allow)}, or copy the data into the suite folder")

    def check(self, path: Path, key: str, where: str, problems: Problems) -> Path | None:
        """The resolved ``path`` to open when it is allowed; else None, with the problem recorded at ``where``."""
        if (err := self.problem(path, key)) is not None:
            problems.add(where, err)
            return None
        return path.resolve()


def trusted_paths(values: Sequence[Path]) -> tuple[Path, ...]:
    """The allowed paths, resolved (symlinks followed), in order, without repeats."""
    return tuple(dict.fromkeys(p.resolve() for p in values))
