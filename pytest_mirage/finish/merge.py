"""``python -m pytest_mirage merge PARTIAL...``: the session end of a sharded run, once, without pytest.

The partials of one run (:mod:`.partial`) are checked to belong together: one pytest-mirage
version, one shard count, the same settings hash, the same suites with the same content, every
shard from 1 to N exactly once and no case result twice. The run's context is then rebuilt from the
options the shards stored (:func:`~pytest_mirage.config.settings.resolve` on the stored
:class:`~pytest_mirage.config.options.RawOptions`, with the merge's own output paths) and
:func:`~pytest_mirage.finish.finish` runs once over every result: the report is the one a single
run would have written.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError
from .partial import Partial, suite_content_hash

if TYPE_CHECKING:
    from ..evaluate.context import RunContext
    from .report import Finished

# the options a merge may give itself (its outputs; where its cache is): every other one is the shards'
OUTPUT_FLAGS = ("--mirage-report", "--mirage-markdown", "--mirage-html", "--mirage-record")
MERGE_FLAGS = (*OUTPUT_FLAGS, "--mirage-cache", "--mirage-cache-mode", "--mirage-github")


@dataclass
class Merged:
    """A merge's outcome: the finished session end, its context, and the exit status of the run."""

    finished: Finished
    ctx: RunContext
    exitstatus: int
    annotations: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def check_together(partials: Sequence[tuple[Path, Partial]]) -> None:
    """ConfigError naming the file (and the shard) when the partials are not the shards of one run."""
    if not partials:
        raise ConfigError("merge: no partial report given; pass every shard's --mirage-report file")
    first_path, first = partials[0]
    for path, p in partials[1:]:
        if p.version != first.version:
            raise ConfigError(f"merge: {path} was written by pytest-mirage {p.version}, {first_path} by "
                              f"{first.version}: run every shard with the same pytest-mirage")
        if p.shard[1] != first.shard[1]:
            raise ConfigError(f"merge: {path} is shard {p.shard[0]}/{p.shard[1]} but {first_path} is shard "
                              f"{first.shard[0]}/{first.shard[1]}: the shards of one run have one N")
        if p.settings_hash != first.settings_hash:
            raise ConfigError(f"merge: {path} was run with other settings than {first_path} "
                              f"({_option_diff(first, p)}): every shard runs with the same options but "
                              "--mirage-shard and its outputs")
        mine = {s.name: s for s in p.suites}
        theirs = {s.name: s for s in first.suites}
        for name in sorted(set(mine) | set(theirs)):
            a, b = theirs.get(name), mine.get(name)
            if a is None or b is None:
                raise ConfigError(f"merge: suite {name!r} is in {first_path if a else path} but not in "
                                  f"{path if a else first_path}: every shard collects the same suites")
            if a.content_hash != b.content_hash or a.ref != b.ref:
                raise ConfigError(f"merge: suite {name!r} differs between {first_path} and {path} (files or "
                                  "location changed): run every shard on the same checkout")
    n = first.shard[1]
    by_index: dict[int, Path] = {}
    for path, p in partials:
        if p.shard[0] in by_index:
            raise ConfigError(f"merge: shard {p.shard[0]}/{n} is given twice: {by_index[p.shard[0]]} and {path}")
        by_index[p.shard[0]] = path
    missing = [k for k in range(1, n + 1) if k not in by_index]
    if missing:
        raise ConfigError(f"merge: shard{'s' if len(missing) > 1 else ''} {', '.join(f'{k}/{n}' for k in missing)} "
                          f"missing: pass the partial report of every shard 1..{n}")
    seen: dict[tuple[str, str, str, int], Path] = {}
    for path, p in partials:
        for r in p.results:
            if r.key in seen:
                raise ConfigError(f"merge: case {r.case_id!r} of suite {r.suite!r} with {r.model!r} (repeat "
                                  f"{r.repeat}) is in {seen[r.key]} and in {path}: shards must not overlap")
            seen[r.key] = path


def _option_diff(a: Partial, b: Partial) -> str:
    from ..config.settings import PER_SHARD

    out = []
    for layer in ("cli", "ini"):
        x, y = getattr(a.options, layer), getattr(b.options, layer)
        for flag in sorted((set(x) | set(y)) - PER_SHARD):
            vx, vy = x.get(flag), y.get(flag)
            if vx != vy:
                out.append(f"{flag}: {repr(vx.value) if vx else 'unset'} vs {repr(vy.value) if vy else 'unset'}")
    return "; ".join(out) or "the same values from other sources"


def load_plugins(specs: Sequence[str], metrics: Any, models: Any) -> None:
    """``merge -p MODULE``: import each module (a dotted name, or a ``.py`` file such as the shards'
    ``conftest.py``) and call its ``pytest_mirage_register_metrics`` / ``pytest_mirage_register_models``
    hooks (with ``config=None``: there is no pytest config in a merge)."""
    import importlib
    import importlib.util
    import inspect

    for spec in specs:
        try:
            if spec.endswith(".py") or "/" in spec or "\\" in spec:
                path = Path(spec)
                if not path.is_file():
                    raise ConfigError(f"merge: -p {spec}: no such file")
                loader = importlib.util.spec_from_file_location(f"_mirage_merge_plugin_{abs(hash(str(path.resolve())))}",
                                                                path)
                if loader is None or loader.loader is None:
                    raise ConfigError(f"merge: -p {spec}: cannot import it as a Python file")
                module = importlib.util.module_from_spec(loader)
                loader.loader.exec_module(module)
            else:
                module = importlib.import_module(spec)
        except ConfigError:
            raise
        except Exception as exc:
            raise ConfigError(f"merge: -p {spec}: importing it failed ({type(exc).__name__}: {exc})") from None
        hooks = [(name, registry) for name, registry in (("pytest_mirage_register_metrics", metrics),
                                                           ("pytest_mirage_register_models", models))
                 if callable(getattr(module, name, None))]
        if not hooks:
            raise ConfigError(f"merge: -p {spec}: defines neither pytest_mirage_register_metrics nor "
                              "pytest_mirage_register_models; pass the module or conftest.py whose hooks register "
                              "the shards' metrics and models")
        for name, registry in hooks:
            fn = getattr(module, name)
            params = inspect.signature(fn).parameters
            kwargs = {k: v for k, v in (("registry", registry), ("config", None)) if k in params}
            fn(**kwargs)


def _unregistered(partials: Sequence[tuple[Path, Partial]], known: set[str], plugins: Sequence[str]) -> None:
    for path, p in partials:
        for r in p.results:
            for name in r.metrics:
                if name not in known:
                    tried = f" (-p {', '.join(plugins)} did not register it)" if plugins else ""
                    raise ConfigError(
                        f"merge: metric {name!r} of case {r.case_id!r} ({r.model}) in {path} is not registered here"
                        f"{tried}: the shards registered it with a pytest_mirage_register_metrics hook (a conftest.py "
                        "or a plugin); pass that module or file with -p MODULE (e.g. -p conftest.py), or make it a "
                        "pytest_mirage.metrics entry point")


def _relocate(partials: list[tuple[Path, Partial]], here: Path) -> list[tuple[Path, Partial]]:
    """Suites the shards ran below their rootdir and that are not at that path here (a merge on
    another checkout path) are found at the same place below ``here``; their results follow."""
    from dataclasses import replace

    from ..suites.resolve import SOURCE_KINDS

    moved: dict[str, str] = {}
    out = []
    for path, p in partials:
        root = Path(p.rootdir) if p.rootdir else None
        for stamp in p.suites:
            ref = stamp.ref
            if root is None or (":" in ref and ref.split(":", 1)[0] in SOURCE_KINDS) or ref in moved:
                continue
            old = Path(ref)
            if old.exists() or not old.is_relative_to(root):
                continue
            new = here / old.relative_to(root)
            if new.is_file():
                moved[ref] = str(new.resolve())
        if not moved:
            out.append((path, p))
            continue
        out.append((path, replace(
            p, suites=tuple(replace(s, ref=moved.get(s.ref, s.ref)) for s in p.suites),
            results=tuple(replace(r, suite_ref=moved.get(r.suite_ref, r.suite_ref)) for r in p.results),
            junit=tuple(replace(c, keys=tuple((moved.get(k[0], k[0]), *k[1:]) for k in c.keys)) for c in p.junit))))
    return out


def merge(paths: Sequence[Path], overrides: Mapping[str, Any], *, progress: bool = False,
          junitxml: Path | None = None, plugins: Sequence[str] = (), rootdir: Path | None = None) -> Merged:
    """Read, check and finish the partials at ``paths``; ``overrides``: the merge's own values of
    :data:`MERGE_FLAGS` (an output flag not given writes nothing); ``junitxml``: where to write the
    JUnit XML of the whole run (:mod:`.junit`); ``plugins``: ``-p`` modules registering metrics and
    models (:func:`load_plugins`); ``rootdir``: the checkout the merge runs on (the current
    directory), where suites the shards ran below their own rootdir are looked for."""
    from ..config.settings import resolve
    from ..engine import EngineStats
    from ..errors import MirageError
    from ..evaluate.context import RunContext
    from ..evaluate.judging import Judging
    from ..evaluate.registries import default_registries
    from ..report.model import CollectionError
    from . import FinishInput, finish
    from .report import merge_health

    unknown = sorted(set(overrides) - set(MERGE_FLAGS))
    if unknown:
        raise ConfigError(f"merge: {', '.join(unknown)} cannot be changed at merge time (the shards' value is used)")
    inputs = {p.resolve() for p in paths}
    outputs = [(flag, overrides.get(flag)) for flag in OUTPUT_FLAGS] + [("--junitxml", junitxml)]
    for flag, value in outputs:
        if value and Path(str(value)).resolve() in inputs:
            raise ConfigError(f"merge: {flag} {value} is one of the partial reports it merges: write "
                              "the merged report to another path")
    # an earlier merge's outputs must not pass for this one's if it stops early (as a run's do)
    from ..report.write import remove_stale

    stale = remove_stale([Path(str(overrides[f])) for f in OUTPUT_FLAGS[:3] if overrides.get(f)]
                         + ([junitxml] if junitxml is not None else []))
    given = {flag: overrides.get(flag) for flag in OUTPUT_FLAGS}
    given.update({flag: overrides[flag] for flag in MERGE_FLAGS if flag not in OUTPUT_FLAGS and overrides.get(flag)})
    given["--mirage-shard"] = None
    partials = [(p, Partial.read(p)) for p in paths]
    check_together(partials)
    partials = _relocate(partials, (rootdir or Path.cwd()).resolve())
    partials.sort(key=lambda x: x[1].shard[0])
    raw = partials[0][1].options.replaced(given)
    settings = resolve(raw)
    metrics, models = default_registries()
    load_plugins(plugins, metrics, models)
    _unregistered(partials, set(metrics.names), plugins)
    ctx = RunContext(settings, metrics, models, progress=progress)
    ctx.validate()
    judging = Judging(ctx)
    judging.validate()
    for stamp in partials[0][1].suites:
        suite = ctx.suite(stamp.ref)
        ctx.register_suite(suite, stamp.ref)
        judging.for_suite(suite)
        now = suite_content_hash(suite)
        if now != stamp.content_hash:
            raise ConfigError(f"merge: suite {stamp.name!r} ({stamp.ref}) changed since the shards ran (content "
                              f"{stamp.content_hash}, now {now}): merge on the checkout the shards ran on")
    baseline = None
    if settings.baseline is not None:
        from .baseline import load_baseline

        baseline = (settings.baseline, load_baseline(settings.baseline))
    stats = EngineStats()
    problems: list[str] = list(stale)
    health: dict[str, dict[str, Any]] = {}
    errors: dict[str, CollectionError] = {}
    for _path, p in partials:
        stats.merge(p.engine_stats)
        problems += [x for x in p.problems if x not in problems]
        health = merge_health(health, p.judge_health)
        for e in p.collection_errors:
            errors.setdefault(e.nodeid, e)
    ctx.stats.merge(stats)
    status = max((p.exitstatus for _path, p in partials), default=0)
    judged = None
    if any(p.arena_judgments for _path, p in partials):
        from .arena import PreJudged

        judged = PreJudged()
        for path, p in partials:
            judged.add(p.arena_judgments, p.arena_judge, str(path))
    given_in = FinishInput(results=tuple(r for _path, p in partials for r in p.results),
                           collection_errors=tuple(errors.values()), exitstatus=status, problems=tuple(problems),
                           baseline=baseline, judge_health=health, judged=judged)
    out_errors: list[str] = []
    try:
        done = finish(ctx, given_in, judging=judging)
    except MirageError as exc:
        judging.close()
        ctx.close()
        raise ConfigError(f"the session end failed: {exc}") from None
    rep = done.report
    if junitxml is not None:
        from .junit import write_junit

        try:
            write_junit(junitxml, rep, [c for _path, p in partials for c in p.junit], tuple(errors.values()))
            done.written.append(junitxml)
        except OSError as exc:
            out_errors.append(f"cannot write the JUnit XML file {junitxml}: {exc.strerror or exc}")
    annotations: list[str] = []
    if settings.github:
        from ..report.github import github_outputs

        annotations, problems_gh = github_outputs(rep)
        out_errors += problems_gh
    code = status
    if code == 0 and (rep.failed_gates or rep.fatal or rep.failed_regressions or done.write_problems or out_errors
                      or rep.status == "failed"):
        code = 1
    judging.close()
    ctx.close()
    return Merged(done, ctx, code, annotations, out_errors)


def summary_lines(merged: Merged, width: int | None = None) -> list[tuple[str, bool]]:
    """What ``merge`` prints: leaderboard, gates, statistics, judge, problems, files (line, is error)."""
    from ..engine import summary_lines as engine_lines
    from ..report.stats_lines import statistics_sections
    from ..report.terminal import gate_lines, judge_line, leaderboard_lines, problem_lines

    rep = merged.finished.report
    out: list[tuple[str, bool]] = [(line, False) for line in engine_lines(merged.ctx.stats)]
    if merged.ctx.settings.leaderboard and rep.leaderboard:
        out += [("== pytest-mirage leaderboard ==", False)] + [(x, False) for x in leaderboard_lines(rep, width=width)]
    lines = gate_lines(rep.gates)
    if lines:
        out += [("-- pytest-mirage gates --", False)] + [(x, x.startswith("FAILED")) for x in lines]
    for title, section in statistics_sections(rep):
        out += [(f"-- {title} --", False)] + [(x, x.startswith("FAILED")) for x in section]
    if rep.judge:
        out.append((judge_line(rep.judge), False))
    out += [(f"mirage surrogate saved: {p}", False) for p in merged.finished.saved_surrogates]
    out += problem_lines(rep, [*merged.finished.write_problems, *merged.errors])
    out += [(f"mirage report: {p}", False) for p in merged.finished.written]
    if merged.finished.record_path:
        out.append((f"mirage record: {merged.finished.record_path}", False))
    out.append((f"mirage merge: {len(rep.results)} results, status {rep.status} (exit {merged.exitstatus})",
                merged.exitstatus != 0))
    return out
