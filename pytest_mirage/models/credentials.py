"""Recognising and removing credentials in what users type: model specs, URLs, option values.

Everything the plugin prints or stores about a model (its display name, error messages, cache
identities, run lines) passes through these functions, so a key written into a spec
(``http://user:KEY@host``, ``?api_key=KEY``, ``extra={"api_key": "KEY"}``) never leaves the process
except in the request that needs it.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import parse_qsl, quote, quote_plus, urlsplit, urlunsplit

MASK = "***"

# whole name segments that mark a secret: "max_tokens" and "tokenizer" are parameters, "api_key"
# and "access_token" are secrets
_SECRET_SEGMENTS = frozenset({"apikey", "authorization", "password", "passwd", "pwd", "secret", "token",
                              "bearer", "auth", "credential", "credentials", "signature", "sig", "cookie", "jwt"})
# "key" is a secret next to one of these ("api_key", "private-key", "access_key"), not alone ("cache_key")
_KEY_QUALIFIERS = frozenset({"api", "private", "access", "secret", "auth", "signing", "client", "subscription"})
# query parameters that are known not to be secrets (shown as they are in messages)
_PUBLIC_QUERY = frozenset({"api-version", "api_version", "version", "model", "format"})
_URL = re.compile(r"(?i)\b([a-z][a-z0-9+.-]{1,20}://)([^\s\"'<>]+)")
_TOKEN_SHAPES = (
    re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{4,}"),
    re.compile(r"\b(sk|pk|rk|hf|gsk|xai)[-_][A-Za-z0-9_-]{6,}"),
)


def secret_name(name: str) -> bool:
    """Whether an option, header, query parameter or JSON key called ``name`` holds a secret.

    Judged by whole segments of the name (``api_key``, ``x-api-key``, ``access_token``,
    ``password``); a name ending in ``_env`` names an environment variable and is not one.
    """
    lowered = name.lower()
    if lowered.endswith(("_env", "-env")):
        return False
    segments = set(re.split(r"[^a-z0-9]+", lowered))
    if segments & _SECRET_SEGMENTS or lowered == "key":
        return True
    return "key" in segments and bool(segments & _KEY_QUALIFIERS)


def safe_url(url: str) -> str:
    """``url`` without user info, query and fragment: the endpoint's identity, safe to show and store."""
    try:
        parts = urlsplit(url.strip())
        host = parts.hostname or ""
        port = parts.port
    except ValueError:
        return MASK
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    if port:
        host = f"{host}:{port}"
    return urlunsplit((parts.scheme.lower(), host.lower(), parts.path.rstrip("/"), "", ""))


def _mask_url(match: re.Match[str]) -> str:
    scheme, rest = match.group(1), match.group(2)
    authority, sep, tail = rest.partition("/")
    if "@" in authority:
        authority = MASK + "@" + authority.rsplit("@", 1)[1]
    text = authority + sep + tail
    if "?" in text:
        head, _, query = text.partition("?")
        query, hash_, fragment = query.partition("#")
        pairs = [(k, v if k.lower() in _PUBLIC_QUERY else MASK) for k, v in parse_qsl(query, keep_blank_values=True)]
        text = head + "?" + "&".join(f"{k}={v}" for k, v in pairs) + (hash_ + MASK if fragment else "")
    return scheme + text


def mask_json_secrets(value: Any) -> Any:
    """A copy of a JSON value with the values of secret-named keys replaced by ``***``."""
    if isinstance(value, dict):
        return {k: (MASK if secret_name(str(k)) else mask_json_secrets(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [mask_json_secrets(v) for v in value]
    if isinstance(value, str):
        return mask_text(value)
    return value


_JSON_SECRET_PAIR = re.compile(r"(?i)(\"([A-Za-z0-9_.-]+)\"\s*:\s*)(\"(?:[^\"\\]|\\.)*\"|[^\s,}\]]+)")


_MIN_SECRET = 4  # shorter values would mask ordinary words


def _basic_parts(secret: str) -> list[str]:
    """For an HTTP Basic header value (``Basic BASE64``): the token, ``user:pass`` and its parts."""
    head, _, token = secret.strip().partition(" ")
    if head.lower() != "basic" or not token:
        return []
    try:
        decoded = base64.b64decode(token.strip(), validate=True).decode("utf-8")
    except (ValueError, UnicodeDecodeError):
        return [token.strip()]
    user, _, password = decoded.partition(":")
    return [token.strip(), decoded, user, password]


def secret_forms(secret: str) -> list[str]:
    """Every form in which ``secret`` may come back in a server's reply or a log, longest first:
    as given, percent-encoded (``quote``, ``quote_plus``), base64 (standard and URL-safe, with and
    without padding), JSON-escaped; for an HTTP Basic header value (``Basic BASE64``) also its token,
    the decoded ``user:pass`` and each part, in each of those encodings. Forms shorter than 4
    characters are left out (they would mask ordinary words)."""
    seeds = [secret, *_basic_parts(secret)]
    forms: set[str] = set()
    for seed in seeds:
        if len(seed) < _MIN_SECRET:
            continue
        raw = seed.encode("utf-8")
        std, safe = base64.b64encode(raw).decode("ascii"), base64.urlsafe_b64encode(raw).decode("ascii")
        forms.update((seed, quote(seed, safe=""), quote_plus(seed, safe=""), std, safe, std.rstrip("="),
                      safe.rstrip("="), json.dumps(seed)[1:-1], json.dumps(seed, ensure_ascii=False)[1:-1]))
    return sorted((f for f in forms if len(f) >= _MIN_SECRET), key=lambda f: (-len(f), f))


def mask_text(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with credentials masked: the given secret values in every encoding a server may echo
    them in (:func:`secret_forms`), user info and query values in URLs, values of secret-named JSON
    keys, and strings shaped like API keys or bearer tokens."""
    forms = sorted({f for secret in secrets if secret for f in secret_forms(secret)}, key=lambda f: (-len(f), f))
    for form in forms:
        if form in text:
            text = text.replace(form, MASK)
    text = _URL.sub(_mask_url, text)
    text = _JSON_SECRET_PAIR.sub(lambda m: m.group(1) + '"***"' if secret_name(m.group(2)) else m.group(0), text)
    text = _TOKEN_SHAPES[0].sub(lambda m: f"{m.group(1)} {MASK}", text)
    return _TOKEN_SHAPES[1].sub(lambda m: f"{m.group(1)}-{MASK}", text)


def safe_option_value(name: str, value: str) -> str:
    """An option's value as it may be shown: masked whole for a secret-named option, else with the
    credentials inside it (URLs, JSON objects) masked."""
    if secret_name(name):
        return MASK
    stripped = value.strip()
    if stripped.startswith("{"):
        try:
            data = json.loads(stripped)
        except ValueError:
            return mask_text(value)
        return json.dumps(mask_json_secrets(data), ensure_ascii=False, separators=(",", ":"))
    return mask_text(value)
