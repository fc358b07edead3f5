"""A tiny upstream on 127.0.0.1 for the proxy: the in-process fake provider, served for real."""

from __future__ import annotations

import http.server
import json
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

from fakes import Emit, FakeProvider, IncomingRequest, ScriptedResponse, ScriptedUsage, Text

KEY = "sk-proj-Zq8cRUFbIh5tq3DECq2uT3BlbkFJ"  # what the client sends; never on disk
REPLY = ScriptedResponse((Text("The invoice went out at 09:14."),), "stop", ScriptedUsage(31, 9))


@dataclass
class Upstream:
    """What the upstream saw, and how it answers: a pause after the first read, a reset."""

    url: str = ""
    seen: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    pause_after_first: float = 0.0
    reset_after_first: bool = False
    sent: bytearray = field(default_factory=bytearray)


def _handler(upstream: Upstream,
             provider: FakeProvider) -> type[http.server.BaseHTTPRequestHandler]:
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length") or 0))
            headers = {k.lower(): v for k, v in self.headers.items()}
            upstream.seen.append((self.path, headers))
            if self.path.startswith("/v1/echo-key"):
                self._refuse(headers)
                return
            plan = provider.plan(IncomingRequest("POST", provider.origin + self.path.split("?")[0],
                                                 headers, body))
            self.send_response(plan.status)
            for name, value in plan.headers:
                self.send_header(name, value)
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            self._play([s.data for s in plan.steps if isinstance(s, Emit)])

        def _play(self, reads: list[bytes]) -> None:
            for number, data in enumerate(reads):
                self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                self.wfile.flush()
                upstream.sent += data
                if number == 0 and upstream.reset_after_first:
                    self.connection.shutdown(socket.SHUT_RDWR)
                    self.close_connection = True
                    return
                if number == 0 and upstream.pause_after_first:
                    time.sleep(upstream.pause_after_first)
            self.wfile.write(b"0\r\n\r\n")

        def _refuse(self, headers: dict[str, str]) -> None:
            # As a careless API does: the refused key, echoed in the error body.
            said = headers.get("authorization", "")
            body = json.dumps({"error": {"message": f"Incorrect API key provided: {said}",
                                         "type": "invalid_request_error"}}).encode()
            self.send_response(401)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    return Handler


def serve(state: Upstream) -> Iterator[Upstream]:
    """Serve ``state``'s upstream on a free loopback port while the caller runs."""
    provider = FakeProvider("openai", REPLY)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _handler(state, provider))
    server.daemon_threads = True
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    # Shutting down waits for the loop's next look at its stop flag (0.5 s by default).
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.01},
                              daemon=True)
    thread.start()
    yield state
    server.shutdown()
    server.server_close()
    thread.join()
