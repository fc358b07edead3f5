"""A long tool result kept whole in a file, and the model sent a part of it and the reference.

Seed 002 §19.2: 会话事件日志能保存工具调用和结果,但证据不会因此"天然可靠":还要保证关键结果
确实写入长期保存的日志、超长输出有稳定引用、系统能从这些记录重建状态; §19.6: 步骤只保存
诊断所需的……证据引用,不要默认复制全部 prompt、源码和工具输出 (codex's
``tool_output_token_limit``, Claude Code cutting long command output).

A reply whose text (as the model would read it, :func:`reply_text`) is longer than the
limit is written whole to ``<state dir>/outputs/output-<execution id>.txt``, written and
fsynced (its folder's name too) before the runner hands the reply back, so before the
reply is committed to the session log: a reply the log holds always names a file a
restart finds whole. The reply becomes its head and tail, its size and that path, fitted
to the limit: a pure function of the text, the path and the limit, so a restart that
reads the reply back from the log sends the model the same bytes (the prompt cache
depends on it).

Example::

    spill = OutputSpill(disk, "/agent/state/outputs", root="/agent", limit=16_000)
    reply = spill.bounded(reply, "exec-3")  # {"chars": 60015, "head": …, "saved_to": …}
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, replace
from typing import Any, Final

from harness.agent._disk import ensure_dir
from harness.agent._requests import reply_text
from harness.agent._tools import ToolReply
from harness.ports import Disk

#: The most characters of one tool result the reference agent sends the model inline.
DEFAULT_INLINE_CHARS: Final = 16_000
#: Where the whole results are kept, below the agent's state folder.
OUTPUTS_DIR: Final = "outputs"
_NOTE: Final = ("this result was too long to send whole: here are its first and last "
                "characters; the whole of it is in the file saved_to")


def output_path(folder: str, execution_id: str) -> str:
    """Where the whole result of execution ``execution_id`` is kept.

    >>> output_path("/agent/state/outputs", "exec-3")
    '/agent/state/outputs/output-exec-3.txt'
    """
    return posixpath.join(folder, f"output-{execution_id}.txt")


def excerpt(text: str, path: str, limit: int) -> dict[str, Any]:
    """What the model is sent of ``text``, kept whole at ``path``: its head and tail, as
    long as the reply's text stays within ``limit`` (a limit too small for the note and
    the path leaves the head and tail empty).

    >>> part = excerpt("x" * 10_000, "/s/outputs/output-e.txt", 600)
    >>> part["chars"], len(part["head"]) == len(part["tail"])
    (10000, True)
    >>> len(_encoded(part)) <= 600
    True
    """
    shown = max(0, limit // 2)
    while True:
        part = {"chars": len(text), "head": text[:shown], "note": _NOTE, "saved_to": path,
                "tail": text[len(text) - shown:] if shown else ""}
        excess = len(_encoded(part)) - limit
        if excess <= 0 or shown == 0:
            return part
        shown = max(0, shown - max(1, (excess + 1) // 2))


def _encoded(content: dict[str, Any]) -> str:
    return reply_text(ToolReply("", "", "ok", content))


@dataclass(frozen=True)
class OutputSpill:
    """Keeps each result longer than ``limit`` in ``folder`` (below ``root``, whose own name
    is durable) and bounds its reply; see the module docstring."""

    disk: Disk
    folder: str
    root: str
    limit: int

    def bounded(self, reply: ToolReply, execution_id: str) -> ToolReply:
        """``reply``, or, when its text is longer than the limit, its excerpt once the whole
        text is durable. Raises :class:`harness.DiskError` when the file cannot be written."""
        text = reply_text(reply)
        if len(text) <= self.limit:
            return reply
        path = output_path(self.folder, execution_id)
        self._write(path, text.encode("utf-8"))
        return replace(reply, content=excerpt(text, path, self.limit))

    def _write(self, path: str, data: bytes) -> None:
        disk = self.disk
        ensure_dir(disk, self.folder, root=self.root)
        if disk.exists(path):
            disk.truncate(path, 0)  # a crashed run's partial file: nothing names it
        with disk.open_append(path) as handle:
            handle.write(data)
            handle.fsync()
            created = handle.created
        if created:
            disk.fsync_dir(self.folder)  # the file's name lives in its folder
