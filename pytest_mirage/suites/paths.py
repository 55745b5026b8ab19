"""Files named by a manifest stay inside the suite folder.

A suite's cases, corpus, runs and prompt template are read from its own folder only: no absolute
paths, no ``..``, and no symlink that resolves outside the folder. A suite folder received from
elsewhere can then not make the loader read (and send to a model) any other file of the machine.
The data folders of source suites (``[source] dir``/``path``/``corpus``) are the documented
exception: they point at public datasets that are usually kept outside the repository.
"""

from __future__ import annotations

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
