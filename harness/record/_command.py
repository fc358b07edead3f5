"""The ``record`` and ``import`` commands: argument parsing over :mod:`harness.record`."""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path

from harness._errors import CaptureError
from harness.frontend import output_path


def add_record_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``record`` and ``import`` to the command line."""
    record = commands.add_parser(
        "record", help="a loopback proxy to a provider that keeps each exchange "
                       "(raw bytes and timing, never a credential)")
    record.add_argument("--upstream", required=True, metavar="URL",
                        help="where requests go on to, such as https://api.openai.com")
    record.add_argument("--out", type=output_path, required=True, metavar="DIR",
                        help="folder for the captures, one JSON file per exchange")
    record.add_argument("--port", type=_port, default=8765, metavar="P",
                        help="port on 127.0.0.1 to listen on (default: 8765; 0: any free one)")
    imported = commands.add_parser(
        "import", help="turn a capture (harness record, HAR, raw SSE) into a scenario")
    imported.add_argument("capture", type=Path, metavar="CAPTURE",
                          help="a file written by harness record, a HAR file or an SSE body")
    imported.add_argument("--out", type=output_path, metavar="FILE",
                          help="write the scenario here (default: print it)")
    imported.add_argument("--entry", type=_index, metavar="N",
                          help="the HAR entry to import, from 0 (default: the first stream)")
    imported.add_argument("--name", type=_scenario_name, metavar="NAME",
                          help="the scenario's name (default: from the capture's file name)")
    imported.add_argument("--stall-seconds", type=_stall, default=None, metavar="S",
                          help="a silence at least this long becomes a stall fault "
                               "(default: 5)")


def _port(text: str) -> int:
    if not text.isdigit() or int(text) > 65535:
        raise argparse.ArgumentTypeError(f"got {text!r}; expected a port from 0 to 65535")
    return int(text)


def _scenario_name(text: str) -> str:
    from harness.scenario import SCENARIO_NAME_PATTERN

    if not re.fullmatch(SCENARIO_NAME_PATTERN, text) or len(text) > 100:
        raise argparse.ArgumentTypeError(f"got {text!r}; expected lowercase letters, digits "
                                         "and '-', such as 'slow-invoice'")
    return text


def _index(text: str) -> int:
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"got {text!r}; expected a whole number >= 0")
    return int(text)


def _stall(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"got {text!r}; expected seconds > 0, such as 5")
    return value


def _is_url(text: str) -> bool:
    """Whether ``text`` is an http(s) URL with a host and, if any, a valid port."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 - raises on a port out of range or not a number
    except ValueError:  # an unclosed IPv6 bracket, a bad port
        return False
    return parts.scheme in {"http", "https"} and bool(parts.hostname)


def run_record(args: argparse.Namespace) -> int:
    """Serve until interrupted; exit 0 with the count of exchanges kept."""
    from harness.record._proxy import RecordingProxy

    if not _is_url(args.upstream):
        raise CaptureError(f"--upstream {args.upstream!r} is no URL; expected one such as "
                           "https://api.openai.com")
    try:
        proxy = RecordingProxy(args.upstream, args.out, port=args.port)
    except OSError as error:
        raise CaptureError(f"cannot listen on 127.0.0.1:{args.port} ({error.strerror or error}); "
                           "choose another --port, or 0 for any free one") from error
    print(f"harness record: {proxy.url} -> {proxy.upstream}; captures in {args.out}/ "
          "(Ctrl-C stops)", file=sys.stderr)
    try:
        proxy.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        proxy.close()
    print(f"harness record: {len(proxy.written)} exchange(s) kept in {args.out}/",
          file=sys.stderr)
    return 0


def run_import(args: argparse.Namespace) -> int:
    """Print or write the scenario; exit 2 (through the caller) on a bad capture."""
    from harness.record._import import DEFAULT_STALL_SECONDS, import_capture

    imported = import_capture(args.capture, entry=args.entry, name=args.name,
                              stall_seconds=args.stall_seconds or DEFAULT_STALL_SECONDS)
    if args.out is None:
        sys.stdout.write(imported.text)
        return 0
    partial = args.out.with_name(f".{args.out.name}.partial")
    partial.write_text(imported.text, encoding="utf-8")
    os.replace(partial, args.out)
    print(f"harness import: wrote {args.out} ({imported.text.count(chr(10))} lines); "
          f"run it: harness run {args.out}", file=sys.stderr)
    return 0
