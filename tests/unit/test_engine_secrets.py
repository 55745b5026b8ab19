"""Credentials never leave the process except in the request that needs them.

A key placed in the environment, in the base URL (user info and query) and in ``extra`` must not
appear in any file the engine writes (the cache, run lines), nor in names, messages or reprs.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from urllib.parse import quote

import pytest

from pytest_mirage.engine import EngineSettings, EngineStats, run_requests, summary_lines
from pytest_mirage.errors import ConfigError, ModelError
from pytest_mirage.models.base import Answer
from pytest_mirage.models.options import SpecOptions
from pytest_mirage.models.registry import ModelRegistry, parse_model_spec
from tests.helpers.cases import make_requests
from tests.helpers.fake_openai import FakeOpenAIServer

pytest.importorskip("openai")

from pytest_mirage.models.openai_adapter import create

KEY_ENV = "sk-envSECRET0000aaaa1111"
KEY_USER = "userSECRET2222"
KEY_URL = "urlSECRET3333bbbb"
KEY_QUERY = "querySECRET4444cccc"
KEY_EXTRA = "extraSECRET5555dddd"
KEYS = (KEY_ENV, KEY_USER, KEY_URL, KEY_QUERY, KEY_EXTRA)
TRANSPORTS = ["httpx"] + (["aiohttp"] if importlib.util.find_spec("aiohttp") else [])


def _leaks(text: str) -> list[str]:
    return [k for k in KEYS if k in text]


def _files_leaking(root: Path) -> dict[str, list[str]]:
    found = {}
    for path in root.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            hits = [k for k in KEYS if k.encode() in data]
            if hits:
                found[str(path)] = hits
    return found


@pytest.mark.parametrize("http", TRANSPORTS)
def test_keys_in_the_environment_and_the_url_are_written_nowhere(tmp_path: Path, http: str,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_KEY", KEY_ENV)
    out_dir = tmp_path / "written"
    out_dir.mkdir()
    with FakeOpenAIServer(faults={"q-1:": ["401"], "q-2:": ["400"]}) as server:
        url = server.base_url.replace("http://", f"http://{KEY_USER}:{KEY_URL}@") + f"?api-version=1&key={KEY_QUERY}"
        # inside a spec, the URL's own "&" is written %26 (the spec's options are "&"-separated)
        spec = parse_model_spec(f"openai:m?base_url={quote(url, safe=':/@?=')}&api_key_env=MY_KEY&http={http}"
                                "&timeout=30&temperature=0")
        adapter = ModelRegistry().create(spec)
        stats = EngineStats()
        out = run_requests(adapter, make_requests(4), EngineSettings(cache_dir=out_dir / "cache", stats=stats))
        sent = server.log[0]
    # the credentials did reach the server, as HTTP Basic auth and a query parameter
    assert sent.path.endswith(f"key={KEY_QUERY}") and sent.headers["authorization"].startswith("Basic ")
    assert [type(a).__name__ for a in out] == ["Answer", "ModelError", "ModelError", "Answer"]
    # what the plugin writes: run lines, error texts, summary lines, the model's names
    lines = [json.dumps(a.to_run_line(), ensure_ascii=False) for a in out if isinstance(a, Answer)]
    texts = [str(e) for e in out if isinstance(e, ModelError)]
    texts += [*summary_lines(stats, str(out_dir / "cache")), spec.display_name, spec.safe_raw, repr(spec),
              str(spec), repr(adapter)]
    (out_dir / "run.jsonl").write_text("\n".join(lines), encoding="utf-8")
    (out_dir / "messages.txt").write_text("\n".join(texts), encoding="utf-8")
    assert _files_leaking(out_dir) == {}
    assert spec.display_name == "openai:m?temperature=0"
    assert "Incorrect API key provided: ***" in texts[0] or "HTTP 401" in texts[0]


def test_a_key_in_extra_is_refused_without_repeating_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY_ENV)
    for extra in (f'{{"api_key": "{KEY_EXTRA}"}}', f'{{"headers": {{"Authorization": "Bearer {KEY_EXTRA}"}}}}',
                  f'{{"nested": [{{"access_token": "{KEY_EXTRA}"}}]}}'):
        spec = parse_model_spec(f"openai:m?extra={extra}")
        with pytest.raises(ConfigError, match="looks like a credential") as info:
            create(spec)
        assert _leaks(str(info.value)) == [] and _leaks(spec.display_name) == [] and _leaks(repr(spec)) == []
        assert "?api_key_env=NAME" in str(info.value)
    broken = parse_model_spec(f'openai:m?extra={{"api_key": "{KEY_EXTRA}", oops}}')
    with pytest.raises(ConfigError, match="which is not JSON") as info:
        create(broken)
    assert _leaks(str(info.value)) == []


@pytest.mark.parametrize("spec", [
    f"openai:m?api_key={KEY_EXTRA}",
    f"openai:m?base_url=http://{KEY_USER}:{KEY_URL}@host/v1&temprature=0",
    f"openai:m?base_url=http://host/v1?token={KEY_QUERY}&max_tokens=x",
    f"nosuchkind:m?password={KEY_EXTRA}",
])
def test_usage_errors_about_a_spec_never_repeat_its_credentials(spec: str) -> None:
    parsed = parse_model_spec(spec)
    with pytest.raises(ConfigError) as info:
        ModelRegistry().create(parsed)
    assert _leaks(str(info.value)) == [], str(info.value)
    assert "***" in str(info.value)


def test_display_names_mask_what_they_keep() -> None:
    spec = parse_model_spec(f'py:mod:fn?cache_version=2&extra={{"token": "{KEY_EXTRA}", "k": 1}}&secret_sauce=1')
    assert spec.display_name == 'py:mod:fn?extra={"token":"***","k":1}'
    assert _leaks(spec.safe_raw) == []
    options = SpecOptions(parse_model_spec("openai:m?api_key_env=MY_KEY"), ["api_key_env"])
    assert options.text("api_key_env") == "MY_KEY"  # names a variable: not a secret, shown as is
