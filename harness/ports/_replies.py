"""What a tool reply says happened, read the same way by the scripted model and the checkers.

The scripted model picks its next answer by the outcome of the last tool replies (a
scenario's ``when: {tool, outcome}``), and the checkers decide from the same replies
what the model was told (I10: an ``ok`` reply says a side effect is done). Both must
read a reply alike, and neither may depend on the other, so the reading lives here.

A reply is read, first rule that applies:

1. a JSON object stating its outcome in an ``outcome``, ``status`` or ``state`` field;
2. the seed's markers (``TOOL_OUTCOME_UNKNOWN``, ``TOOL_NOT_STARTED``, …), or a prose
   reply that opens with one of the status words below and a colon, in any case
   (``error: the arguments were cut``, ``unknown: the process restarted mid-send``);
3. the provider's own error flag (Anthropic's ``is_error``);
4. a JSON error shape: a non-empty ``error``/``errors``, ``isError``/``is_error`` true,
   ``ok``/``success`` false;
5. the error wording the mainstream agent frameworks put in a failed call's reply
   (LangGraph's ``ToolNode``, smolagents, pydantic-ai's retry prompt, the OpenAI Agents
   SDK, CrewAI, LlamaIndex, Agno, Semantic Kernel, the Vercel AI SDK, MCP) and a Python
   exception or traceback;
6. anything else is ``ok``.

The error wording is recognised where the frameworks put it (at the start of the
reply, or as its closing request to fix the call), so a result that merely mentions
an error in its middle is still ``ok``.

>>> classify_reply('{"sent": true}')
'ok'
>>> classify_reply("Error: ValidationError('to: Field required')\\n Please fix your mistakes.")
'error'
"""

from __future__ import annotations

import json
import re
from typing import Final, Literal, get_args

ToolOutcome = Literal[
    "ok",
    "error",
    "timeout",
    "cancelled",
    "truncated",
    "interrupted_before_execution",
    "unknown_after_restart",
]
#: Every outcome a tool reply can stand for (the scenario format's ``when: {outcome}``).
TOOL_OUTCOMES: Final[tuple[ToolOutcome, ...]] = get_args(ToolOutcome)
#: What each outcome means, in a sentence (the README's table is made from it).
TOOL_OUTCOME_MEANINGS: Final[dict[ToolOutcome, str]] = {
    "ok": "the tool ran and its reply reports success",
    "error": "the tool ran, or refused the call, and its reply reports an error",
    "timeout": "the call ran past its timeout; whether it took effect is not known",
    "cancelled": "the call was cancelled before it finished",
    "truncated": "the reply was cut short",
    "interrupted_before_execution": "the call never started (TOOL_NOT_STARTED): safe to "
                                    "call again",
    "unknown_after_restart": "a restart found the call started but not finished "
                             "(TOOL_OUTCOME_UNKNOWN): look before calling again",
}

# Markers the agents put in a tool reply, checked in this order; the first that
# appears decides (seed 002 §19.1 names TOOL_NOT_STARTED and TOOL_OUTCOME_UNKNOWN).
_OUTCOME_MARKERS: Final[tuple[tuple[str, ToolOutcome], ...]] = (
    ("TOOL_OUTCOME_UNKNOWN", "unknown_after_restart"),
    ("unknown_after_restart", "unknown_after_restart"),
    ("TOOL_NOT_STARTED", "interrupted_before_execution"),
    ("interrupted_before_execution", "interrupted_before_execution"),
    ("TOOL_TIMEOUT", "timeout"),
    ("TRUNCATED", "truncated"),
    ("CancelledError", "cancelled"),
)

# A JSON reply may state its outcome as a field; these keys are read in this order,
# and these words (besides the outcome names themselves) mean the outcome beside
# them. An agent with its own wording is understood by what it states, not by
# whether it happens to quote the reference agent's markers.
_STATUS_KEYS: Final = ("outcome", "status", "state")
_STATUS_WORDS: Final[dict[str, ToolOutcome]] = {
    **{outcome: outcome for outcome in TOOL_OUTCOMES},
    "unknown": "unknown_after_restart",
    "outcome_unknown": "unknown_after_restart",
    "not_started": "interrupted_before_execution",
    "interrupted": "interrupted_before_execution",
    "timed_out": "timeout",
    "failed": "error",
    "failure": "error",
    "success": "ok",
}

# A prose reply that states its outcome first: "error: …", "Unknown: …", "not started: …"
# (an agent's own wording, as a JSON reply's status field would say it).
_STATUS_OPENING: Final = re.compile(
    r"\s*(" + "|".join(sorted((re.escape(word).replace("_", "[_ ]") for word in _STATUS_WORDS),
                              key=len, reverse=True)) + r")\s*:", re.IGNORECASE)

# How the frameworks begin the reply of a call that failed. Each is the framework's
# fixed text before the error it quotes:
#   LangGraph/LangChain ToolNode: "Error: {error}\n Please fix your mistakes." and
#     "Error invoking tool '{name}' with kwargs {kwargs} with error:\n{error}\n Please fix
#     the error and try again."
#   smolagents: "Error executing tool '{name}' …", older "Error when executing tool {name}
#     …", and the memory's "Error:\n{error}\nNow let's retry: …"
#   MCP servers (the python SDK): "Error executing tool {name}: {error}"
#   OpenAI Agents SDK (default_tool_error_function): "An error occurred while running the
#     tool. Please try again. Error: {error}"; for JavaScript, a call whose arguments do not
#     parse (runner/toolExecution): "An error occurred while parsing tool arguments. Please
#     try again with valid JSON. Error: {error}"
#   CrewAI: "I encountered an error while trying to use the tool. …"
#   LlamaIndex FunctionTool: "Encountered error: {error}" (its workflow agents: str(error)
#     alone, read by _CALL_REFUSED below)
#   Agno (agno.utils.functions.get_function_call): "Error while decoding function
#     arguments: {error}\n\nPlease make sure we can json.loads() the arguments and retry."
#   Semantic Kernel (Kernel.invoke_function_call), a call it refuses before running it:
#     "The tool call arguments are malformed. Arguments must be in JSON format. Please try
#     again.", "The tool call with name `{name}` is not part of the provided tools, …",
#     "Missing required argument(s): […]. …", "Received unexpected argument(s): […]. …",
#     "There are `{n}` tool call arguments required and only `{m}` received. …"; and one
#     that raised: "An error occurred while invoking the function {name}: {error}"
#   The Vercel AI SDK (Node.js, `ai`), a call it refuses before running it, sent as the
#     call's plain-text output: "Invalid input for tool {name}: {error}" (cut arguments:
#     "… JSON parsing failed: Text: {text}.\nError message: …"; arguments its schema
#     refuses: "… Type validation failed: …") and "Model tried to call unavailable tool
#     '{name}'. Available tools: …."
_ERROR_OPENINGS: Final = re.compile(
    r"(?:Error(?::| invoking tool| executing tool| when executing tool| calling tool"
    r"| while decoding function arguments)"
    r"|An error occurred while (?:running the tool|invoking the function "
    r"|parsing tool arguments\.)"
    r"|I encountered an error while trying to use "
    r"the tool|Encountered error:|Tool error:|Exception:"
    r"|The tool call arguments are malformed\.|The tool call with name `[^`]*` is not part of "
    r"the provided tools|(?:Missing required|Received unexpected) argument\(s\): \["
    r"|There are `\d+` tool call arguments required and only `\d+` received\."
    r"|Invalid input for tool [^:\s]+: |Model tried to call unavailable tool ')",
)
# …or end it with a request to fix the call (pydantic-ai's retry prompt, LangChain's;
# Agno's for arguments that are JSON but no object: "Function arguments are not a valid
# JSON object.\n\n Please fix and retry.").
_ERROR_CLOSINGS: Final = ("Fix the errors and try again.", "Please fix your mistakes.",
                          "Please fix the error and try again.", "Please fix and retry.",
                          "Please make sure we can json.loads() the arguments and retry.")
# A Python exception as a traceback's last line or repr(error) opens the reply:
# "ValueError: …", "ToolException('…')", "smtplib.SMTPRecipientsRefused: …" (a name
# qualified by its module is an exception's whatever it ends with).
_EXCEPTION_OPENING: Final = re.compile(
    r"(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception)[:(]|(?:[a-z_]\w*\.)+[A-Z]\w*: ")
# LlamaIndex's workflow agents answer a failed call with str(error) alone; the one error
# a framework meets before any tool code runs is Python refusing the call's arguments:
# "send_mail() missing 1 required positional argument: 'to'", "… got an unexpected
# keyword argument 'cc'", "… takes 2 positional arguments but 3 were given".
_CALL_REFUSED: Final = re.compile(
    r"[A-Za-z_][\w.]*\(\) (?:missing \d+ required|missing a required argument|got an "
    r"unexpected keyword argument|got multiple values for|takes \d+ positional|too many "
    r"positional arguments)")
_TRACEBACK: Final = "Traceback (most recent call last):"
# smolagents answers a call as "Call id: {id}\n…": what follows is the reply proper.
_CALL_ID_LINE: Final = re.compile(r"\A\s*Call id: [^\n]*\n")


def classify_reply(content: str, *, is_error: bool = False) -> ToolOutcome:
    """The outcome a tool reply's content stands for (see the module docstring).

    >>> classify_reply('{"error": "TOOL_OUTCOME_UNKNOWN", "message": "..."}')
    'unknown_after_restart'
    >>> classify_reply('{"status": "unknown", "note": "it may have been sent; look first"}')
    'unknown_after_restart'
    >>> classify_reply("the mail went out; no errors")
    'ok'
    >>> classify_reply("unknown: the process restarted during this send; it may have gone out")
    'unknown_after_restart'
    >>> classify_reply("error: arguments were cut at the output limit; not run")
    'error'
    """
    value = _json(content)
    stated = _stated_outcome(value)
    if stated is not None:
        return stated
    for marker, outcome in _OUTCOME_MARKERS:
        if marker in content:
            return outcome
    opened = _STATUS_OPENING.match(content) if value is None else None
    if opened is not None:
        return _STATUS_WORDS[opened.group(1).lower().replace(" ", "_")]
    if is_error or _error_shape(value) or (value is None and _error_prose(content)):
        return "error"
    return "ok"


def reply_failed(content: str, *, is_error: bool = False) -> bool:
    """Whether a tool reply reports that its call failed with an error.

    The other outcomes that are not ``ok`` (unknown, not started, timed out, …) say
    something else than a failure; their checks read them by their own names.

    >>> reply_failed('{"status": "error", "detail": "SMTP 550"}')
    True
    >>> reply_failed('{"error": "TOOL_OUTCOME_UNKNOWN"}')
    False
    """
    return classify_reply(content, is_error=is_error) == "error"


def _json(content: str) -> object | None:
    """The reply as JSON, or None when it is not JSON (prose)."""
    if not content.lstrip().startswith(("{", "[", '"')):
        return None
    try:
        value: object = json.loads(content)
    except ValueError:
        return None
    return value


def _stated_outcome(value: object | None) -> ToolOutcome | None:
    """The outcome a JSON object reply states in a status field, if it states one."""
    if not isinstance(value, dict):
        return None
    for key in _STATUS_KEYS:
        word = value.get(key)
        if isinstance(word, str) and word.strip().lower() in _STATUS_WORDS:
            return _STATUS_WORDS[word.strip().lower()]
    return None


def _error_shape(value: object | None) -> bool:
    """A JSON error object: ``{"error": …}``, ``{"errors": [...]}``, ``{"isError": true}``,
    ``{"ok": false}`` or ``{"success": false}``. ``{"error": null}`` is no error."""
    if isinstance(value, str):
        return _error_prose(value)  # a JSON string reply holds prose
    if not isinstance(value, dict):
        return False
    if any(value.get(key) not in (None, "", [], {}, False) for key in ("error", "errors")):
        return True
    if any(value.get(key) is True for key in ("isError", "is_error")):
        return True
    return any(value.get(key) is False for key in ("ok", "success"))


def _error_prose(content: str) -> bool:
    """A framework's error wording, an exception or a traceback (see ``_ERROR_OPENINGS``)."""
    text = _CALL_ID_LINE.sub("", content, count=1).strip()
    if _ERROR_OPENINGS.match(text) or _EXCEPTION_OPENING.match(text) \
            or _CALL_REFUSED.match(text):
        return True
    return _TRACEBACK in text or text.endswith(_ERROR_CLOSINGS)
