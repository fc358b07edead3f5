"""SSE decoding throughput: harness.agent's decoder against httpx-sse and the openai SDK.

Every decoder runs the whole bytes → events path on the same input:

* ours: ``SSEDecoder.feed(read)`` per network read, then ``close()``;
* httpx-sse: what ``EventSource.aiter_sse`` does over ``response.aiter_text()`` —
  httpx's incremental ``TextDecoder``, then ``SSELineDecoder.decode``, then
  ``line.rstrip("\\n")`` and ``SSEDecoder.decode`` per line (run synchronously,
  so no event-loop cost is charged to it);
* openai: ``openai._streaming.SSEDecoder().iter_bytes(reads)``, which is how
  the SDK's ``Stream`` feeds ``response.iter_bytes()``.

Inputs: a realistic OpenAI Chat Completions stream (text deltas with Chinese,
accents and emoji, a tool call, the usage chunk, ``[DONE]``) of about 8 MB read
in 64 KiB pieces, and a 200 KB prefix of it read one byte at a time. Each cell
is the median of several runs. Run::

    .venv/bin/python benchmarks/bench_sse_decode.py [--quick]
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable

from _quick import scaled
from httpx._decoders import TextDecoder
from httpx_sse._decoders import SSEDecoder as HttpxSseDecoder
from httpx_sse._decoders import SSELineDecoder
from openai._streaming import SSEDecoder as OpenAIDecoder

from harness.ports import SSEDecoder

_WORDS = [
    "Hello",
    " world",
    ",",
    " 你好",
    "世界",
    " café",
    " naïve",
    " 🚀",
    " tokens",
    "。",
    "\n",
    " ok",
]


def realistic_stream(target_bytes: int) -> bytes:
    """An OpenAI-style chunk stream of about ``target_bytes`` bytes."""
    frames: list[bytes] = []
    size = 0
    index = 0
    while size < target_bytes:
        delta = {"content": _WORDS[index % len(_WORDS)] + _WORDS[(index * 7) % len(_WORDS)]}
        frames.append(_frame(index, delta))
        size += len(frames[-1])
        index += 1
    call = {
        "index": 0,
        "id": "call_1",
        "type": "function",
        "function": {"name": "search", "arguments": '{"q": "天气"}'},
    }
    frames.append(_frame(index, {"tool_calls": [call]}))
    usage = {"prompt_tokens": 900, "completion_tokens": index, "total_tokens": 900 + index}
    frames.append(b"data: " + json.dumps({"choices": [], "usage": usage}).encode() + b"\n\n")
    frames.append(b"data: [DONE]\n\n")
    return b"".join(frames)


def _frame(index: int, delta: dict[str, object]) -> bytes:
    chunk = {
        "id": "chatcmpl-bench",
        "object": "chat.completion.chunk",
        "created": 1767225600,
        "model": "gpt-4o-mini",
        "system_fingerprint": "fp_bench",
        "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": None}],
        "usage": None,
        "seq": index,
    }
    return b"data: " + json.dumps(chunk, ensure_ascii=False).encode() + b"\n\n"


def reads_of(payload: bytes, size: int) -> list[bytes]:
    return [payload[i : i + size] for i in range(0, len(payload), size)]


def ours(reads: list[bytes]) -> int:
    decoder = SSEDecoder()
    count = 0
    for read in reads:
        count += len(decoder.feed(read))
    return count + len(decoder.close())


def httpx_sse(reads: list[bytes]) -> int:
    text_decoder = TextDecoder(encoding="utf-8")
    lines = SSELineDecoder()
    decoder = HttpxSseDecoder()
    count = 0

    def take(batch: list[str]) -> int:
        found = 0
        for line in batch:
            if decoder.decode(line.rstrip("\n")) is not None:
                found += 1
        return found

    for read in reads:
        text = text_decoder.decode(read)
        if text:
            count += take(lines.decode(text))
    tail = text_decoder.flush()
    if tail:
        count += take(lines.decode(tail))
    return count + take(lines.flush())


def openai_sdk(reads: list[bytes]) -> int:
    return sum(1 for _ in OpenAIDecoder().iter_bytes(iter(reads)))


def median_seconds(decode: Callable[[list[bytes]], int], reads: list[bytes], runs: int) -> float:
    timings = []
    for _ in range(runs):
        started = time.perf_counter()
        decode(reads)
        timings.append(time.perf_counter() - started)
    return statistics.median(timings)


def main() -> None:
    big = realistic_stream(scaled(8 * 1024 * 1024, 256 * 1024))
    small = big[: scaled(200, 4) * 1024]
    cases = [(scaled("8 MB", "256 KB") + ", 64 KiB reads", big, 64 * 1024, scaled(7, 1)),
             (scaled("200 KB", "4 KB") + ", 1-byte reads", small, 1, scaled(5, 1))]
    decoders = [("ours", ours), ("httpx-sse", httpx_sse), ("openai", openai_sdk)]
    header = f"{'input':<22}{'ours MB/s':>11}{'httpx-sse':>11}{'openai':>10}"
    header += f"{'ours/httpx-sse':>16}{'ours/openai':>13}"
    print(header)
    print("-" * len(header))
    for label, payload, read_size, runs in cases:
        reads = reads_of(payload, read_size)
        counts = {name: fn(reads) for name, fn in decoders}
        if len(set(counts.values())) != 1:
            raise SystemExit(f"decoders disagree on the event count: {counts}")
        mb = len(payload) / 1e6
        speed = {name: mb / median_seconds(fn, reads, runs) for name, fn in decoders}
        print(
            f"{label:<22}{speed['ours']:>11.1f}{speed['httpx-sse']:>11.1f}{speed['openai']:>10.1f}"
            f"{speed['ours'] / speed['httpx-sse']:>15.2f}x{speed['ours'] / speed['openai']:>12.2f}x"
        )


if __name__ == "__main__":
    main()
