"""The company's mail relay and notes service, as the example agents' tools reach them.

Outside production (no ``MAIL_RELAY_URL`` / ``NOTES_URL`` in the environment) every
call refuses to run rather than guess an address.
"""

from __future__ import annotations

import json
import os
import urllib.request
from typing import Any


def _service(variable: str) -> str:
    url = os.environ.get(variable)
    if not url:
        raise RuntimeError(f"{variable} is not set: this tool only runs against the real service")
    return url.rstrip("/")


def post(variable: str, path: str, payload: dict[str, Any]) -> dict[str, Any]:
    """POST ``payload`` as JSON to the service named by ``variable``; its JSON answer."""
    request = urllib.request.Request(
        _service(variable) + path,
        data=json.dumps(payload).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        result: dict[str, Any] = json.load(response)
        return result


def get(variable: str, path: str) -> dict[str, Any]:
    """GET ``path`` from the service named by ``variable``; its JSON answer."""
    with urllib.request.urlopen(_service(variable) + path, timeout=30) as response:
        result: dict[str, Any] = json.load(response)
        return result
