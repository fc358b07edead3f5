"""A tool reply that reports an error is a failed call, for I10 and for the model's `when:`.

The frameworks tell the model a call failed in their own words, not in the reference
agent's markers. Each row below is a reply as one framework writes it; where the
framework is not installed here, the test name says the wording is the one it is
known to write.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import warnings
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from mail_scenarios import mail_scenario
from minimal_agent import minimal_factory

from harness.checks import check_i10
from harness.ports import classify_reply
from harness.runner import Case, ScriptedModel, run_case
from harness.runner._model import last_tool_results
from harness.runner._observed import observed_transcript
from harness.trace import CallRecord, MessageRecord, Trace

# pydantic-ai 2.68 (installed): RetryPromptPart.model_response() for a validation error and
# for ModelRetry, and a failed ToolReturnPart as sent on a provider without an error flag.
PYDANTIC_AI = [
    '1 validation error:\n```json\n[\n  {\n    "type": "missing",\n    "loc": [\n      "to"\n'
    '    ],\n    "msg": "Field required",\n    "input": {\n      "body": "x"\n    }\n  }\n]\n'
    '```\n\nFix the errors and try again.',
    "the outbox is locked\n\nFix the errors and try again.",
    '{"error":"SMTP 550 mailbox unavailable"}',
]
# LangGraph's ToolNode (as known, not installed here): the current template and the older one.
LANGGRAPH_AS_KNOWN = [
    "Error invoking tool 'mail' with kwargs {'body': 'hi'} with error:\n to: Field required\n"
    " Please fix the error and try again.",
    "Error: 1 validation error for mail\nto\n  Field required [type=missing, input_value="
    "{'body': 'hi'}, input_type=dict]\n Please fix your mistakes.",
]
# smolagents (as known, not installed here): the tool-execution errors, and the memory's reply
# to a failed step ("Call id: …" then "Error:").
SMOLAGENTS_AS_KNOWN = [
    "Error executing tool 'mail' with arguments {\"body\": \"hi\"}: TypeError: mail() missing "
    "1 required positional argument: 'to'\nPlease try again or use another tool",
    "Error when executing tool mail with arguments {'body': 'hi'}: TypeError: mail() missing "
    "1 required positional argument: 'to'\nYou should only use this tool with a correct input.",
    "Call id: call_t1_0\nError:\nError executing tool 'mail' with arguments {}: KeyError: 'to'"
    "\nNow let's retry: take care not to repeat previous errors! If you have retried several "
    "times, try a completely different approach.\n",
]
# The OpenAI Agents SDK's default_tool_error_function, CrewAI and LlamaIndex (as known).
OTHERS_AS_KNOWN = [
    "An error occurred while running the tool. Please try again. Error: SMTP 550",
    "I encountered an error while trying to use the tool. This was the error: SMTP 550.\n "
    "Tool mail accepts these inputs: to, body",
    "Encountered error: SMTP 550 mailbox unavailable",
]
# LlamaIndex's workflow agents (FunctionAgent) reply str(error) alone: seen from
# llama-index-core 0.14 calling a tool with the model's cut arguments ({}).
LLAMAINDEX_WORKFLOW = [
    "send_mail() missing 1 required positional argument: 'to'",
    "send_mail() missing a required argument: 'subject'",
    "send_mail() got an unexpected keyword argument 'cc'",
    "read_outbox() takes 0 positional arguments but 1 was given",
]
# Agno 3.1 (installed beside the frameworks extra): a call whose arguments json.loads (and
# ast.literal_eval) refuse, as the cut arguments are, and arguments that are no object.
AGNO = [
    "Error while decoding function arguments: unterminated string literal (detected at line "
    "1) (<unknown>, line 1)\n\nPlease make sure we can json.loads() the arguments and retry.",
    "Function arguments are not a valid JSON object.\n\n Please fix and retry.",
]
# Semantic Kernel 1.44 (in an environment of its own): Kernel.invoke_function_call's replies
# to a call it refuses before running it, and to a function that raised.
SEMANTIC_KERNEL = [
    "The tool call arguments are malformed. Arguments must be in JSON format. Please try again.",
    "The tool call with name `MailPlugin-mail` is not part of the provided tools, please try "
    "again with a supplied tool call name and make sure to validate the name.",
    "Missing required argument(s): ['to']. Please revise the arguments to match the function "
    "signature.",
    "Received unexpected argument(s): ['cc']. Please revise the arguments to match the "
    "function signature.",
    "There are `3` tool call arguments required and only `0` received. The required arguments "
    "are: ['to', 'subject', 'body']. Please provide the required arguments and try again.",
    "An error occurred while invoking the function MailPlugin-send_mail: SMTP 550",
]
# The Vercel AI SDK 6 (Node.js; examples/node_frameworks/ai_sdk_agent.mjs), a call it
# refuses before running it, as its openai provider sends the call's output: seen with
# arguments cut at the output limit, and its wording for arguments its schema refuses and
# for a tool it was not given.
AI_SDK = [
    "Invalid input for tool send_mail: JSON parsing failed: Text: {\"to\":\"ops@example.com\","
    "\"subject\":\"de.\nError message: Unterminated string in JSON at position 37",
    "Invalid input for tool send_mail: Type validation failed: Value: {}.\nError message: "
    "[{\"expected\": \"string\", \"code\": \"invalid_type\", \"path\": [\"to\"]}]",
    "Model tried to call unavailable tool 'mail'. Available tools: send_mail, read_outbox.",
]
# The OpenAI Agents SDK for JavaScript 0.14 (Node.js; examples/node_frameworks/
# openai_agents_agent.mjs), a call whose arguments do not parse (runner/toolExecution's
# buildParseErrorResult: seen with arguments cut at the output limit; without the error
# when tool data is redacted), and one its zod schema refuses (tool()'s default
# errorFunction, the Python SDK's wording).
OPENAI_AGENTS_JS = [
    "An error occurred while parsing tool arguments. Please try again with valid JSON. "
    "Error: Unterminated string in JSON at position 37",
    "An error occurred while parsing tool arguments. Please try again with valid JSON.",
    "An error occurred while running the tool. Please try again. Error: ModelBehaviorError: "
    "Invalid JSON input for tool",
]
# Microsoft Agent Framework 1.26 (agent_framework._tools): a call whose arguments its schema
# refuses (cut arguments, read as {"raw": …}), and a function that raised, without
# include_detailed_errors.
AGENT_FRAMEWORK = ["Error: Argument parsing failed.", "Error: Function failed."]
# An exception's own text, a traceback, and the JSON error shapes.
EXCEPTIONS_AND_SHAPES = [
    "ValueError: the outbox is locked",
    "smtplib.SMTPRecipientsRefused: {'a': (550, b'no such user')}",
    "ToolException('SMTP 550')",
    'Traceback (most recent call last):\n  File "tools.py", line 3, in mail\n'
    "ConnectionRefusedError: [Errno 111] Connection refused",
    '{"error": {"type": "smtp", "message": "550"}}',
    '{"status": "error", "detail": "SMTP 550"}',
    '{"ok": false, "reason": "locked"}',
    '{"success": false}',
    '{"isError": true, "content": [{"type": "text", "text": "SMTP 550"}]}',
    '{"errors": ["to: Field required"]}',
]
# Replies that merely mention an error, or carry an empty error field, are results.
RESULTS = [
    '{"sent": true}',
    '{"sent": true, "error": null}',
    "Mail sent; no errors.",
    "Sent. The report said: Error: none found",
    "Sent; the template said main() missing nothing",
    "Observation:\n{'sent': True}",
    '"queued"',
    "[1, 2]",
    "Sent. Invalid input for tool send_mail was fixed by hand.",
]


@pytest.mark.parametrize("reply", [*PYDANTIC_AI, *LANGGRAPH_AS_KNOWN, *SMOLAGENTS_AS_KNOWN,
                                   *OTHERS_AS_KNOWN, *LLAMAINDEX_WORKFLOW, *AGNO,
                                   *SEMANTIC_KERNEL, *AI_SDK, *OPENAI_AGENTS_JS,
                                   *AGENT_FRAMEWORK, *EXCEPTIONS_AND_SHAPES])
def test_each_frameworks_error_reply_reads_as_a_failed_call(reply: str) -> None:
    assert classify_reply(reply) == "error"


@pytest.mark.parametrize("reply", RESULTS)
def test_a_result_that_mentions_an_error_still_reads_ok(reply: str) -> None:
    assert classify_reply(reply) == "ok"


# A hand-written agent states the outcome first, in its own case, as a status field would.
OUTCOME_STATED_FIRST = [
    ("error: arguments were cut at the output limit; not run. Call again.", "error"),
    ("ERROR - no such mailbox", "ok"),  # no colon: not a statement of the outcome
    ("failed: SMTP 550", "error"),
    ("unknown: process restarted during this send; it may have gone out",
     "unknown_after_restart"),
    ("Outcome unknown: the send was under way at the restart", "unknown_after_restart"),
    ("not started: the call was interrupted before it ran", "interrupted_before_execution"),
    ("Timed out: no answer from the SMTP server in 30 s", "timeout"),
    ("ok: sent", "ok"),
    ("unknownish: a word that only begins like one", "ok"),
]


@pytest.mark.parametrize(("reply", "outcome"), OUTCOME_STATED_FIRST)
def test_a_prose_reply_that_opens_with_its_outcome_reads_as_it(reply: str,
                                                               outcome: str) -> None:
    assert classify_reply(reply) == outcome


def test_the_installed_pydantic_ai_still_words_its_retry_prompt_so() -> None:
    # The rows above were copied from this version; a newer one must still read as failed.
    messages = pytest.importorskip("pydantic_ai.messages")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        retry = messages.RetryPromptPart("the outbox is locked", tool_name="mail")
        failed = messages.ToolReturnPart("mail", "SMTP 550", tool_call_id="c", outcome="failed")
    assert classify_reply(retry.model_response()) == "error"
    assert classify_reply(failed.model_response_str()) == "error"


def test_the_installed_agno_still_words_a_call_it_could_not_decode_so(
        require_framework: Callable[[str], None]) -> None:
    # Agno answers a call whose arguments it cannot decode with this error, and runs nothing.
    # It is in the frameworks extra: under HARNESS_REQUIRE_FRAMEWORKS=1 it must be here.
    require_framework("agno")
    functions = importlib.import_module("agno.utils.functions")
    function = importlib.import_module("agno.tools.function")

    def send_mail(to: str, body: str) -> str:
        return "sent"

    tools = {"send_mail": function.Function.from_callable(send_mail)}
    for cut in ('{"to":"ops@example.com","bo', "[1, 2]"):
        call = functions.get_function_call("send_mail", cut, "call_1", tools)
        assert call is not None
        assert call.error is not None
        assert classify_reply(call.error) == "error"


def test_the_installed_semantic_kernel_still_words_a_call_it_refuses_so() -> None:
    # Semantic Kernel answers a cut call, a call missing an argument and one to a tool it
    # does not know with these replies, and runs nothing (an environment of its own).
    sk = pytest.importorskip("semantic_kernel")
    contents = pytest.importorskip("semantic_kernel.contents")
    functions = pytest.importorskip("semantic_kernel.functions")
    sent: list[str] = []

    class MailPlugin:
        @functions.kernel_function(description="Send an e-mail.")  # type: ignore[untyped-decorator]
        def send_mail(self, to: str, body: str) -> str:
            sent.append(to)
            return "sent"

    kernel = sk.Kernel()
    kernel.add_plugin(MailPlugin(), plugin_name="MailPlugin")
    for name, arguments in (("MailPlugin-send_mail", '{"to":"ops@example.com","bo'),
                            ("MailPlugin-send_mail", '{"to":"ops@example.com"}'),
                            ("MailPlugin-mail", '{"to":"ops@example.com","body":"x"}')):
        history = contents.ChatHistory()
        call = contents.FunctionCallContent(id="call_1", name=name, arguments=arguments)
        asyncio.run(kernel.invoke_function_call(call, history))
        reply = str(history.messages[-1].items[0].result)
        assert classify_reply(reply) == "error", reply
    assert sent == []


def _langgraph_body(reply: str) -> dict[str, Any]:
    call = {"id": "call_t1_0", "type": "function",
            "function": {"name": "mail", "arguments": json.dumps({"body": "hi"})}}
    return {"messages": [{"role": "user", "content": "Mail a."},
                         {"role": "assistant", "content": None, "tool_calls": [call]},
                         {"role": "tool", "tool_call_id": "call_t1_0", "content": reply}]}


def test_the_scripted_model_takes_the_error_branch_for_a_langgraph_error() -> None:
    scenario = mail_scenario(model=[
        {"turn": 1, "calls": [{"tool": "mail", "args": {"to": "a", "body": "hi"}}]},
        {"turn": 2, "when": {"tool": "mail", "outcome": "error"},
         "calls": [{"tool": "mail", "args": {"to": "a", "body": "hi"}}]},
        {"turn": 2, "text": "Sent."},
    ])
    body = _langgraph_body(LANGGRAPH_AS_KNOWN[0])
    results = last_tool_results("openai", body["messages"])
    reply = ScriptedModel(scenario).choose(2, results)
    assert [(r.tool, r.outcome) for r in results] == [("mail", "error")]
    assert reply is not None
    assert reply.calls  # the branch that calls again, not "Sent."


def test_the_observed_transcript_marks_a_prose_error_reply_failed() -> None:
    messages = observed_transcript("openai", _langgraph_body(LANGGRAPH_AS_KNOWN[1]))
    assert [m.status for m in messages if m.role == "tool"] == ["error"]


def _mail_trace() -> Trace:
    scenario = mail_scenario()
    result = run_case(Case(scenario.name, Path("scenarios/mail.yaml"), 0), scenario,
                      minimal_factory())
    assert result.trace is not None
    return result.trace


def test_i10_does_not_count_an_error_reply_as_a_side_effect_done() -> None:
    # The mail never ran (no effect in the ledger) and the agent told the model so in
    # LangGraph's words; a status of "ok" beside that text does not make it done.
    trace = _mail_trace()
    assert trace.outcome is not None
    transcript = (
        MessageRecord("user", "turn_1", "Mail a."),
        MessageRecord("assistant", "turn_1", "", (CallRecord("call_t1_0", "mail",
                                                             '{"body":"hi"}'),)),
        MessageRecord("tool", "turn_1", LANGGRAPH_AS_KNOWN[0], call_id="call_t1_0",
                      status="ok"),
    )
    failed = replace(trace, effects=(), outcome=replace(trace.outcome, transcript=transcript))
    verdict = check_i10(failed)
    assert (verdict.status, verdict.message) == ("unknown", "no side effect was reported done")
