from __future__ import annotations

import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "tests" / "data" / "demo"
# tests/data holds suites the tests copy into pytester folders; it is not itself a test target
collect_ignore = ["data"]


@pytest.fixture
def demo_suite(pytester: pytest.Pytester) -> Path:
    """A copy of the demo suite (en, hi, ja; 6 cases) inside the pytester directory."""
    dest = pytester.path / "demo"
    shutil.copytree(DEMO, dest)
    return dest


@pytest.fixture(scope="session", autouse=True)
def _warm_model_caches() -> None:
    """Load language-ID models once, before pytester snapshots sys.modules: in-process pytester runs
    drop modules imported during the run, so each run would otherwise reload them."""
    from pytest_mirage.metrics import builtin_registry
    from pytest_mirage.metrics.base import Sample
    from pytest_mirage.models.base import Answer
    from pytest_mirage.suites.loader import load_suite

    # transformers resolves its classes lazily; an in-process pytester run drops the modules imported
    # during it, which leaves transformers half-initialised for later tests: resolve them up front
    try:
        import transformers
    except ImportError:
        pass
    else:
        for name in ("GenerationMixin", "AutoModelForCausalLM", "AutoModelForSequenceClassification", "AutoTokenizer",
                     "BertForSequenceClassification", "LlamaForCausalLM", "XLMRobertaModel", "BertModel"):
            getattr(transformers, name)
    suite = load_suite(DEMO)
    reg = builtin_registry()
    for case in suite.cases:
        ans = Answer(case.id, "warm", case.answers[0], answer=case.answers[0], citations=case.relevant)
        reg.compute(Sample(case, ans, case.passages), reg.defaults())
