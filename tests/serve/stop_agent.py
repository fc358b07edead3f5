"""A small agent process for the ``--exec`` stop-sequence tests: httpx, no SDK.

It streams the OpenAI dialect asking for the stop sequence ``<end_code>``, as
smolagents' ``CodeAgent`` does, and asks again when a stream breaks off before its
end. The answer it keeps is the whole retry's text with the stop sequence the API left
out put back; with ``--join`` it keeps the broken attempt's text joined to the retry's
instead (the flaw I8 fails). After two turns it prints the last answer and exits 0.
Run as ``python tests/serve/stop_agent.py [--join]``.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import httpx

STOP = "<end_code>"


def main() -> int:
    join = "--join" in sys.argv[1:]
    messages: list[dict[str, Any]] = [{"role": "user", "content": os.environ["HARNESS_PROMPT"]}]
    with httpx.Client(timeout=30) as client:
        code = answer(client, messages, join)
        messages += [{"role": "assistant", "content": code + STOP},
                     {"role": "user", "content": "Observation: 4"}]
        print(answer(client, messages, join))
    return 0


def answer(client: httpx.Client, messages: list[dict[str, Any]], join: bool) -> str:
    """The text of the first whole answer; with ``join``, after what broken ones sent."""
    body = {"model": os.environ["HARNESS_MODEL"], "messages": messages, "stream": True,
            "stop": [STOP]}
    kept = ""
    for _ in range(4):
        text, whole = streamed(client, body)
        if whole:
            return kept + text
        if join:
            kept += text
    sys.exit("gave up after 4 broken streams")


def streamed(client: httpx.Client, body: dict[str, Any]) -> tuple[str, bool]:
    """The text one stream sent, and whether it reached its end."""
    text = ""
    try:
        with client.stream("POST", f"{os.environ['OPENAI_BASE_URL']}/chat/completions",
                           json=body) as response:
            if response.status_code != 200:
                return "", False
            for line in response.iter_lines():
                if not line.startswith("data: "):
                    continue
                if line == "data: [DONE]":
                    return text, True
                for choice in json.loads(line[len("data: "):]).get("choices") or []:
                    text += (choice.get("delta") or {}).get("content") or ""
    except httpx.HTTPError:
        pass
    return text, False


if __name__ == "__main__":
    sys.exit(main())
