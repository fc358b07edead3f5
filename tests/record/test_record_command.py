"""The record command itself: serves until Ctrl-C, says what it kept, refuses bad input."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from loopback import KEY, Upstream

from harness._cli import main

# System tier (pytest --system): real processes and servers on loopback.
pytestmark = pytest.mark.system


def test_record_serves_until_interrupted_and_counts_what_it_kept(upstream: Upstream,
                                                                 tmp_path: Path) -> None:
    command = [sys.executable, "-m", "harness", "record", "--upstream", upstream.url,
               "--out", str(tmp_path / "captures"), "--port", "0"]
    with subprocess.Popen(command, stderr=subprocess.PIPE, text=True) as proxy:
        assert proxy.stderr is not None
        first = proxy.stderr.readline()
        assert first.startswith("harness record: http://127.0.0.1:")
        url = first.split()[2]
        answer = httpx.post(url + "/v1/chat/completions", timeout=10,
                            headers={"authorization": f"Bearer {KEY}"},
                            json={"model": "m", "stream": True,
                                  "messages": [{"role": "user", "content": "hi"}]})
        assert answer.status_code == 200
        proxy.send_signal(signal.SIGINT)
        rest = proxy.stderr.read()
        assert proxy.wait(timeout=10) == 0
    assert "1 exchange(s) kept" in rest
    assert "Traceback" not in rest
    [kept] = (tmp_path / "captures").iterdir()
    assert KEY.encode() not in kept.read_bytes()


def test_record_refuses_a_bad_upstream_and_a_taken_port(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["record", "--upstream", "api.openai.com", "--out", str(tmp_path)]) == 2
    assert "is no URL; expected one such as https://api.openai.com" in capsys.readouterr().err
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["record", "--upstream", "http://127.0.0.1:9", "--out", str(tmp_path),
                     "--port", str(port)]) == 2
    err = capsys.readouterr().err
    assert f"cannot listen on 127.0.0.1:{port}" in err
    assert "Traceback" not in err
