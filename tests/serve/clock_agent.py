"""A small agent process for the ``--exec`` clock and crash tests: httpx, no SDK.

It asks the OpenAI dialect (no stream), runs each tool call over ``$HARNESS_TOOLS_URL``,
and waits as each 429 asks: ``retry-after-ms``, else ``Retry-After`` read as a float of
seconds, as the official SDKs read them; with neither, a backoff of 2 scenario seconds
(``$HARNESS_TIME_SCALE``). It keeps nothing across a restart. Run as
``python tests/serve/clock_agent.py`` from the harness's start folder.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

import httpx

_TURNS = 12


def main() -> int:
    scale = float(os.environ.get("HARNESS_TIME_SCALE", "1"))
    tools = [{"type": "function", "function": spec}
             for spec in json.loads(os.environ["HARNESS_TOOLS"])]
    messages: list[dict[str, Any]] = [{"role": "user", "content": os.environ["HARNESS_PROMPT"]}]
    with httpx.Client(timeout=30) as client:
        for _ in range(_TURNS):
            body = {"model": os.environ["HARNESS_MODEL"], "messages": messages, "tools": tools}
            message = ask(client, body, scale)["choices"][0]["message"]
            messages.append(message)
            calls = message.get("tool_calls") or []
            if not calls:
                print(message.get("content") or "")
                return 0
            for call in calls:
                function = call["function"]
                result = client.post(f"{os.environ['HARNESS_TOOLS_URL']}/{function['name']}",
                                     content=function.get("arguments") or "{}")
                messages.append({"role": "tool", "tool_call_id": call["id"],
                                 "content": result.text})
    return 1


def ask(client: httpx.Client, body: dict[str, Any], scale: float) -> Any:
    url = f"{os.environ['OPENAI_BASE_URL']}/chat/completions"
    for _ in range(6):
        response = client.post(url, json=body)
        if response.status_code == 200:
            return response.json()
        millis = response.headers.get("retry-after-ms")
        seconds = response.headers.get("retry-after")
        wait = float(millis) / 1000 if millis else float(seconds) if seconds else 2 * scale
        time.sleep(wait)
    sys.exit(f"gave up after 6 attempts: {response.status_code} {response.text}")


if __name__ == "__main__":
    sys.exit(main())
