"""The provider's endpoints besides the model's answer: models, embeddings, stored responses.

An agent (or its SDK) asks these on start or between turns: the list of models
(``GET /v1/models``, Gemini's ``GET /v1beta/models``), embeddings (OpenAI's
``POST /v1/embeddings``, Gemini's ``:embedContent`` and ``:batchEmbedContents``)
and, for the Responses API, a stored response (``GET`` and ``DELETE
/v1/responses/{id}``) and its input items (``GET /v1/responses/{id}/input_items``).
Each answers in its API's shape. Embeddings are deterministic: each vector comes from
a seeded hash of its input, unit length, so the same text gives the same vector in
every run and different texts different ones.

    >>> vector = embedding(0, "m", "hello", 4)
    >>> vector == embedding(0, "m", "hello", 4), vector == embedding(0, "m", "hullo", 4)
    (True, False)
    >>> round(sum(v * v for v in vector), 6)
    1.0
"""

from __future__ import annotations

import base64
import hashlib
import math
import re
import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from fakes._input_items import Refusal, listing
from fakes._wire import compact_json

#: Dimensions of an embedding when the request names none (text-embedding-3-small's).
DEFAULT_DIMENSIONS = 1536
#: The most dimensions a request may ask for (text-embedding-3-large's).
MAX_DIMENSIONS = 3072
# A fixed creation time, as the answers' `created`: bytes identical across runs.
_CREATED = 1_735_689_600
_RESPONSE_PATH = re.compile(r"/v1/responses/(?P<id>[^/]+)")
_INPUT_ITEMS_PATH = re.compile(r"/v1/responses/(?P<id>[^/]+)/input_items")
_GEMINI_MODELS = re.compile(r"/(?:v1beta|v1)/models")
_GEMINI_EMBED = re.compile(
    r"/(?:v1beta|v1)/models/(?P<model>[^/:]+):(?P<verb>embedContent|batchEmbedContents)")


@dataclass(frozen=True)
class Answer:
    """An endpoint's answer: status and JSON body (an error is worded by the caller)."""

    status: int
    body: bytes


def embedding(seed: int, model: str, text: str, dimensions: int) -> list[float]:
    """A unit vector of ``dimensions`` floats from a sha256 stream over seed, model and text."""
    values: list[float] = []
    block = 0
    while len(values) < dimensions:
        digest = hashlib.sha256(f"{seed}\0{model}\0{block}\0{text}".encode()).digest()
        # Eight 4-byte words per block, each mapped onto [-1, 1).
        values += [word / 2**31 - 1.0 for word in struct.unpack(">8I", digest)]
        block += 1
    values = values[:dimensions]
    norm = math.sqrt(sum(v * v for v in values)) or 1.0
    return [round(v / norm, 8) for v in values]


def answer(dialect: str, method: str, path: str, body: Mapping[str, Any] | None, *,
           seed: int, models: Sequence[str], stored: Mapping[str, bytes],
           input_items: Mapping[str, Sequence[Any]] | None = None, query: str = ""
           ) -> Answer | str | None:
    """The answer of one of these endpoints; a str is a 4xx's message (the caller words it
    in the dialect's error body); None when ``path`` is none of them. ``input_items`` are
    the stored responses' (:mod:`fakes._input_items`), ``query`` the URL's query string."""
    if method == "GET" and path == "/v1/models" and dialect != "gemini":
        return Answer(200, _model_list(dialect, models))
    if method == "GET" and _GEMINI_MODELS.fullmatch(path) and dialect == "gemini":
        return Answer(200, _model_list(dialect, models))
    if method == "POST" and path == "/v1/embeddings" and dialect in ("openai",
                                                                     "openai-responses"):
        return _openai_embeddings(seed, body)
    found = _GEMINI_EMBED.fullmatch(path)
    if method == "POST" and found is not None and dialect == "gemini":
        if found["verb"] == "embedContent":
            return _gemini_embedding(seed, found["model"], body)
        return _gemini_batch(seed, found["model"], body)
    found = _INPUT_ITEMS_PATH.fullmatch(path)
    if found is not None and dialect == "openai-responses" and method == "GET":
        return _input_item_list(found["id"], input_items or {}, query)
    found = _RESPONSE_PATH.fullmatch(path)
    if found is not None and dialect == "openai-responses" and method in ("GET", "DELETE"):
        response_id = found["id"]
        if response_id not in stored:
            return Answer(404, not_found_body(f"Response with id '{response_id}' not found."))
        if method == "DELETE":
            return Answer(200, compact_json({"id": response_id, "object": "response",
                                             "deleted": True}).encode())
        return Answer(200, stored[response_id])
    return None


def _input_item_list(response_id: str, input_items: Mapping[str, Sequence[Any]], query: str
                     ) -> Answer:
    items = input_items.get(response_id)
    if items is None:
        return Answer(404, not_found_body(f"Response with id '{response_id}' not found."))
    page = listing(items, query)
    if isinstance(page, Refusal):
        return Answer(400, not_found_body(page.message, page.param, page.code))
    return Answer(200, page)


def not_found_body(message: str, param: str | None = None, code: str | None = None) -> bytes:
    """The Responses API's body for an id it does not hold (a 404, or a 400 naming ``param``)."""
    error = {"message": message, "type": "invalid_request_error", "param": param, "code": code}
    return compact_json({"error": error}).encode()


def _model_list(dialect: str, models: Sequence[str]) -> bytes:
    names = list(dict.fromkeys(models))
    if dialect == "anthropic":
        data = [{"type": "model", "id": name, "display_name": name,
                 "created_at": "2025-01-01T00:00:00Z"} for name in names]
        return compact_json({"data": data, "has_more": False, "first_id": names[0],
                             "last_id": names[-1]}).encode()
    if dialect == "gemini":
        listed = [{"name": f"models/{name}", "displayName": name, "version": "001",
                   "inputTokenLimit": 1_048_576, "outputTokenLimit": 65_536,
                   "supportedGenerationMethods": ["generateContent", "countTokens",
                                                  "embedContent"]} for name in names]
        return compact_json({"models": listed}).encode()
    listing: list[dict[str, object]] = [
        {"id": name, "object": "model", "created": _CREATED, "owned_by": "system"}
        for name in names]
    return compact_json({"object": "list", "data": listing}).encode()


def _dimensions(body: Mapping[str, Any], field: str) -> int | str:
    wanted = body.get(field, DEFAULT_DIMENSIONS)
    if isinstance(wanted, bool) or not isinstance(wanted, int) \
            or not 1 <= wanted <= MAX_DIMENSIONS:
        return f"'{field}' must be an integer from 1 to {MAX_DIMENSIONS}; got {wanted!r}"
    return wanted


def _openai_embeddings(seed: int, body: Mapping[str, Any] | None) -> Answer | str:
    if body is None:
        return "We could not parse the JSON body of your request."
    texts = body.get("input")
    texts = [texts] if isinstance(texts, str) else texts
    if not isinstance(texts, list) or not texts:
        return "'input' must be a string or a non-empty array of strings or tokens"
    model = body.get("model")
    if not isinstance(model, str) or not model:
        return "you must provide a model parameter"
    dimensions = _dimensions(body, "dimensions")
    if isinstance(dimensions, str):
        return dimensions
    as_base64 = body.get("encoding_format") == "base64"
    data = []
    tokens = 0
    for index, item in enumerate(texts):
        text = item if isinstance(item, str) else compact_json(item)
        tokens += max(1, len(text) // 4)
        vector = embedding(seed, model, text, dimensions)
        # The SDKs ask for base64 (little-endian float32) and decode it themselves.
        encoded: object = base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode() \
            if as_base64 else vector
        data.append({"object": "embedding", "index": index, "embedding": encoded})
    return Answer(200, compact_json({"object": "list", "data": data, "model": model,
                                     "usage": {"prompt_tokens": tokens,
                                               "total_tokens": tokens}}).encode())


def _gemini_values(seed: int, model: str, body: Mapping[str, Any] | None
                   ) -> list[float] | str:
    content = body.get("content") if body is not None else None
    parts = content.get("parts") if isinstance(content, dict) else None
    if not isinstance(parts, list):
        return "* EmbedContentRequest.content: contents must not be empty"
    text = "".join(str(p.get("text", "")) for p in parts if isinstance(p, dict))
    dimensions = _dimensions(body or {}, "outputDimensionality")
    if isinstance(dimensions, str):
        return dimensions
    return embedding(seed, model, text, dimensions)


def _gemini_embedding(seed: int, model: str, body: Mapping[str, Any] | None) -> Answer | str:
    values = _gemini_values(seed, model, body)
    if isinstance(values, str):
        return values
    return Answer(200, compact_json({"embedding": {"values": values}}).encode())


def _gemini_batch(seed: int, model: str, body: Mapping[str, Any] | None) -> Answer | str:
    """``:batchEmbedContents`` (what google-genai's ``embed_content`` calls): one vector
    per request of ``requests``."""
    requests = body.get("requests") if body is not None else None
    if not isinstance(requests, list) or not requests:
        return "* BatchEmbedContentsRequest.requests: requests must not be empty"
    embeddings = []
    for request in requests:
        values = _gemini_values(seed, model, request if isinstance(request, dict) else None)
        if isinstance(values, str):
            return values
        embeddings.append({"values": values})
    return Answer(200, compact_json({"embeddings": embeddings}).encode())
