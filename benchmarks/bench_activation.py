"""What an installed pytest-mirage costs a project that does not use it.

Runs ``pytest`` on a one-test project (in a temporary folder, subprocesses, alternating) with the
plugin loaded and with ``-p no:mirage``, and prints the median wall time of each and their ratio
(target: <= 1.1). Also reports the import time of ``pytest_mirage.plugin`` alone.

    python benchmarks/bench_activation.py [--runs 15]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _time(cmd: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, check=True, capture_output=True)
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=15)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "test_one.py").write_text("def test_one():\n    assert 1 + 1 == 2\n")
        (root / "pytest.ini").write_text("[pytest]\n")
        base = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_one.py"]
        with_plugin, without = [], []
        _time(base, root)  # warm the file system cache and byte-compiled modules
        for _ in range(args.runs):
            with_plugin.append(_time(base, root))
            without.append(_time([*base, "-p", "no:mirage"], root))
        imports = [_time([sys.executable, "-c", "import pytest_mirage.plugin"], root) for _ in range(5)]
        bare = [_time([sys.executable, "-c", "pass"], root) for _ in range(5)]
    a, b = statistics.median(with_plugin), statistics.median(without)
    print(f"one-test project, {args.runs} runs each (median wall time):")
    print(f"  with pytest-mirage   {a:.3f} s")
    print(f"  with -p no:mirage    {b:.3f} s")
    print(f"  ratio                {a / b:.3f}  (target <= 1.1)")
    print(f"import pytest_mirage.plugin: {statistics.median(imports) - statistics.median(bare):.3f} s "
          "over a bare interpreter start")
    imported = subprocess.run([sys.executable, "-c", "import sys, pytest_mirage.plugin; "
                               "print(sorted(m for m in ('numpy', 'rich', 'sqlite3', 'regex') if m in sys.modules))"],
                              capture_output=True, text=True, check=True).stdout.strip()
    print(f"heavy-ish modules imported by the plugin module: {imported}")


if __name__ == "__main__":
    main()
