"""``harness record``: a loopback proxy that forwards to a provider and keeps each exchange.

Point an agent's base URL at the proxy (``OPENAI_BASE_URL=http://127.0.0.1:8765/v1``);
each request goes to the upstream as it came (credentials included: the upstream
needs them), each answer comes back read by read as the upstream sent it, and the
exchange is written to ``OUT/NNNN-<path>.json`` with its raw bytes and when each read
arrived (:mod:`harness.record._capture`), credentials removed before anything is
written. It runs in real time, bound to 127.0.0.1 only: it records the real world.

Example::

    with RecordingProxy("https://api.openai.com", Path("captures")) as proxy:
        client = openai.OpenAI(base_url=proxy.url + "/v1")
        ...                                   # every exchange lands in captures/
"""

from __future__ import annotations

import http.server
import itertools
import re
import threading
import time
from pathlib import Path
from types import TracebackType
from typing import Final

import httpx

from harness.record._capture import Chunk, Ended, Exchange, write_exchange

#: Headers of one hop only (RFC 9110 §7.6.1), never forwarded; content-length and
#: content-encoding are set again for what the proxy itself sends.
_HOP_BY_HOP: Final = frozenset({
    "connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer",
    "upgrade", "host", "content-length", "accept-encoding", "content-encoding",
})
# The upstream may answer slowly (a long stream, a stall worth recording), never for ever.
_TIMEOUT: Final = httpx.Timeout(connect=30.0, read=600.0, write=60.0, pool=30.0)


class RecordingProxy:
    """The proxy server; a context manager that serves on a thread (see the module docstring).

    ``port`` 0 picks a free one; :attr:`url` says which.
    """

    def __init__(self, upstream: str, out: Path, *, port: int = 0,
                 transport: httpx.BaseTransport | None = None) -> None:
        self.upstream = upstream.rstrip("/")
        self.out = out
        out.mkdir(parents=True, exist_ok=True)
        self._client = httpx.Client(timeout=_TIMEOUT, transport=transport,
                                    follow_redirects=False)
        self._numbers = itertools.count(_next_number(out))
        self._lock = threading.Lock()
        self.written: list[Path] = []
        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", port), _handler(self))
        # Closing waits for the exchanges in flight: a capture is never cut off by Ctrl-C.
        self._server.daemon_threads = False
        self._server.block_on_close = True
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """Where clients send their requests: ``http://127.0.0.1:PORT``."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def serve_forever(self) -> None:
        """Serve until interrupted (the command's foreground mode)."""
        self._server.serve_forever()

    def __enter__(self) -> RecordingProxy:
        # Closing waits for the serving loop to look at its stop flag: every 0.05 s rather
        # than the default 0.5 s, so a proxy in a block ends when the block does.
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        """Stop serving and release the socket and the upstream client."""
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join()
        self._client.close()

    def keep(self, exchange: Exchange) -> Path:
        """Write ``exchange`` (scrubbed) as the next numbered file of :attr:`out`."""
        with self._lock:
            number = next(self._numbers)
        slug = re.sub(r"[^a-z0-9]+", "-", httpx.URL(exchange.url).path.lower()).strip("-")
        path = write_exchange(exchange, self.out / f"{number:04d}-{slug or 'root'}.json")
        with self._lock:
            self.written.append(path)
        return path

    def forward(self, handler: http.server.BaseHTTPRequestHandler) -> None:
        """Send one request upstream and stream its answer back, keeping the exchange."""
        length = int(handler.headers.get("content-length") or 0)
        body = handler.rfile.read(length) if length else b""
        headers = [(k.lower(), v) for k, v in handler.headers.items()
                   if k.lower() not in _HOP_BY_HOP]
        # Identity: the bytes kept are the bytes the client reads, never compressed ones.
        headers.append(("accept-encoding", "identity"))
        url = self.upstream + handler.path
        started = time.monotonic()
        try:
            with self._client.stream(handler.command, url, headers=headers,
                                     content=body) as answer:
                headers_at = time.monotonic() - started
                kept = [(k.lower(), v) for k, v in answer.headers.multi_items()
                        if k.lower() not in _HOP_BY_HOP]
                _send_head(handler, answer.status_code, kept)
                chunks, ended, client_left = _relay(handler, answer, started)
        except httpx.TransportError as error:
            _send_unreachable(handler, url, error)
            return
        self.keep(Exchange(handler.command, url, tuple(headers), body, answer.status_code,
                           tuple(kept), tuple(chunks), headers_at, ended))
        if ended == "eof" and not client_left:
            # The last chunk goes out once the capture is on disk: a client that has the
            # whole answer knows its exchange was kept.
            handler.wfile.write(b"0\r\n\r\n")
            handler.wfile.flush()


def _relay(handler: http.server.BaseHTTPRequestHandler, answer: httpx.Response,
           started: float) -> tuple[list[Chunk], Ended, bool]:
    """Pass each read on as it comes (chunked, the last chunk left to the caller), noting
    when it arrived; also say how the upstream ended and whether the client left early."""
    chunks: list[Chunk] = []
    ended: Ended = "eof"
    client_left = False
    try:
        for data in answer.iter_raw():
            chunks.append(Chunk(time.monotonic() - started, data))
            handler.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            handler.wfile.flush()
    except httpx.TransportError:
        ended = "reset"  # the upstream broke the stream: so does the proxy, for the client
        handler.close_connection = True
    except OSError:
        # The client left (its own timeout, often: the stall worth a scenario). What came
        # so far is kept; the capture then ends without its terminal event.
        handler.close_connection = client_left = True
    return chunks, ended, client_left


def _send_head(handler: http.server.BaseHTTPRequestHandler, status: int,
               headers: list[tuple[str, str]]) -> None:
    handler.send_response(status)
    for name, value in headers:
        handler.send_header(name, value)
    handler.send_header("transfer-encoding", "chunked")
    handler.end_headers()


def _send_unreachable(handler: http.server.BaseHTTPRequestHandler, url: str,
                      error: httpx.TransportError) -> None:
    body = (f'{{"error": {{"message": "harness record: the upstream {url} cannot be reached '
            f'({type(error).__name__})", "type": "proxy_error"}}}}').encode()
    handler.send_response(502)
    handler.send_header("content-type", "application/json")
    handler.send_header("content-length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


def _handler(proxy: RecordingProxy) -> type[http.server.BaseHTTPRequestHandler]:
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # chunked answers, kept-alive connections

        def _forward(self) -> None:
            proxy.forward(self)

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _forward

        def log_message(self, format: str, *args: object) -> None:
            pass  # the command prints one line per kept exchange instead

    return Handler


def _next_number(out: Path) -> int:
    """One past the highest ``NNNN-`` file already in ``out``: a second session appends."""
    numbers = [int(p.name[:4]) for p in out.glob("[0-9][0-9][0-9][0-9]-*.json")]
    return max(numbers, default=0) + 1
