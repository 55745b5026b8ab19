"""Credentials come back masked in every encoding a server may echo them in (issue 21, defect 7)."""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import quote, quote_plus

import pytest

from pytest_mirage.engine import EngineSettings, EngineStats, run_requests
from pytest_mirage.errors import ModelError
from pytest_mirage.models.credentials import MASK, mask_text, secret_forms
from pytest_mirage.models.registry import ModelRegistry, parse_model_spec
from tests.helpers.cases import make_requests

USER, PASSWORD = "alice-SECRETuser", "p@ss/SECRET+word"
KEY = "sk-proj-SECRETkey0123456789"


def _forms_of(value: str) -> list[str]:
    raw = value.encode()
    return [value, quote(value, safe=""), quote_plus(value), base64.b64encode(raw).decode(),
            base64.urlsafe_b64encode(raw).decode(), base64.b64encode(raw).decode().rstrip("="),
            json.dumps(value)[1:-1]]


@pytest.mark.parametrize("form", _forms_of(KEY))
def test_each_encoding_of_a_key_is_masked(form: str) -> None:
    text = f"upstream said: {form} is not valid"
    assert form not in mask_text(text, [KEY]) and MASK in mask_text(text, [KEY])


def test_a_basic_header_masks_its_token_the_pair_and_each_part() -> None:
    header = "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
    for value in (f"{USER}:{PASSWORD}", USER, PASSWORD):
        for form in _forms_of(value):
            out = mask_text(f"echo [{form}]", [header])
            assert form not in out, (value, form, out)
    assert "SECRET" not in mask_text(header.split()[1], [header])


def test_short_forms_are_not_masked() -> None:
    assert all(len(f) >= 4 for f in secret_forms("abcd"))
    assert mask_text("a b c", ["abc"]) == "a b c"


class _Echo(BaseHTTPRequestHandler):
    """Answers every request 400 with the Authorization header echoed in several encodings."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        auth = self.headers.get("authorization", "")
        token = auth.partition(" ")[2]
        try:
            decoded = base64.b64decode(token).decode()
        except ValueError:
            decoded = token
        body = json.dumps({"error": {"message": f"bad credentials: token={token} pair={decoded} "
                                                f"quoted={quote(decoded, safe='')} b64pass="
                                                f"{base64.b64encode(decoded.partition(':')[2].encode()).decode()}"}})
        data = body.encode()
        self.send_response(400)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def echo_url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Echo)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def test_basic_auth_in_base_url_does_not_leak_when_the_server_echoes_it(echo_url: str, tmp_path: object) -> None:
    pytest.importorskip("openai")
    url = echo_url.replace("http://", f"http://{quote(USER, safe='')}:{quote(PASSWORD, safe='')}@")
    spec = parse_model_spec(f"openai:m?base_url={quote(url, safe=':/@')}&timeout=10")
    adapter = ModelRegistry().create(spec)
    out = run_requests(adapter, make_requests(1), EngineSettings(cache_dir=None, stats=EngineStats()))
    (err,) = out
    assert isinstance(err, ModelError), out
    text = str(err)
    assert "bad credentials" in text  # the server's message is shown ...
    assert "SECRET" not in text, text  # ... with every form of the credentials masked
    for value in (USER, PASSWORD, f"{USER}:{PASSWORD}"):
        assert base64.b64encode(value.encode()).decode().rstrip("=") not in text
