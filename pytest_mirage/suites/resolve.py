"""Resolve ``--mirage-suite`` values: bundled names, folders, manifests and source specs."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..errors import ConfigError, did_you_mean
from .loader import MANIFEST, load_suite
from .model import Suite
from .sources import SOURCE_KINDS, load_source_spec

__all__ = ["SOURCE_KINDS", "bundled_suites", "bundled_suites_dir", "load_ref", "suite_ref"]


def bundled_suites_dir() -> Path | None:
    """Bundled suites: inside the installed wheel, or the repository's ``suites/`` in a checkout."""
    pkg = Path(__file__).resolve().parents[1]
    for cand in (pkg / "_bundled_suites", pkg.parent / "suites"):
        if cand.is_dir() and any(cand.glob(f"*/{MANIFEST}")):
            return cand
    return None


def bundled_suites() -> dict[str, Path]:
    """Bundled suite name -> its ``suite.toml``."""
    root = bundled_suites_dir()
    if root is None:
        return {}
    return {p.parent.name: p for p in sorted(root.glob(f"*/{MANIFEST}"))}


def suite_ref(value: str, base: Path) -> str:
    """A canonical reference: the manifest path for folders/names, the spec itself for sources."""
    kind = value.split(":", 1)[0]
    if ":" in value and kind in SOURCE_KINDS:
        return value
    p = Path(value)
    if not p.is_absolute():
        p = base / p
    if p.is_dir() and (p / MANIFEST).is_file():
        return str((p / MANIFEST).resolve())
    if p.is_file() and p.name == MANIFEST:
        return str(p.resolve())
    bundled = bundled_suites()
    if value in bundled:
        return str(bundled[value].resolve())
    raise ConfigError(f"--mirage-suite {value!r}: not a bundled suite, a suite folder or a source spec; "
                      f"bundled suites: {', '.join(bundled) or 'none'}; source kinds: "
                      f"{', '.join(k + ':PATH' for k in SOURCE_KINDS)}.{did_you_mean(value, bundled)}")


def load_ref(ref: str, trusted_paths: Sequence[Path] = ()) -> Suite:
    """Load a reference made by :func:`suite_ref`: a source spec (the user's own: read wherever it
    points) or a manifest path, whose ``[source]`` reads inside its folder or ``trusted_paths``."""
    kind = ref.split(":", 1)[0]
    if ":" in ref and kind in SOURCE_KINDS:
        return load_source_spec(ref)
    return load_suite(Path(ref), trusted_paths)
