"""Every way a scenario file can be wrong gives one exact, located message."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from harness import HarnessError
from harness.scenario import ScenarioError, load_scenario, load_scenarios, validate_paths

VALID = """\
name: t
dialect: openai
tools:
  notes: {kind: append}
model:
  - turn: 1
    text: hi
expect:
  stop_state: complete
"""


def write(tmp_path: Path, text: str, name: str = "s.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def assert_error(path: Path, *lines: str) -> ScenarioError:
    """Loading ``path`` fails with exactly ``lines``, each prefixed by the file name."""
    __tracebackhide__ = True
    expected = "\n".join(f"{path}:{line}" for line in lines)
    with pytest.raises(ScenarioError, match=f"^{re.escape(expected)}$") as caught:
        load_scenario(path)
    return caught.value


def test_an_unknown_key_suggests_the_close_one_and_lists_the_allowed(tmp_path: Path) -> None:
    error = assert_error(
        write(tmp_path, VALID + "descripton: x\n"),
        "10:1: scenario: unknown key: got 'descripton'; expected one of 'name', 'description', "
        "'dialect', 'seed', 'tools', 'model', 'faults', 'jobs', 'cancels', 'crash', 'budget', "
        "'provider', 'goal', 'verifier', 'hook', 'training_data', 'cache_breakpoints', 'expect', "
        "'absorb'. Did you mean 'description'?",
    )
    assert (error.line, error.column, error.value) == (10, 1, "descripton")
    assert error.hint == "Did you mean 'description'?"
    assert isinstance(error, HarnessError)


def test_an_unknown_nested_key_names_its_mapping(tmp_path: Path) -> None:
    assert_error(
        write(tmp_path, VALID.replace("{kind: append}", "{kind: append, concurency_safe: true}")),
        "4:25: tools.notes: unknown key: got 'concurency_safe'; expected one of 'kind', "
        "'concurrency_safe', 'behaviour', 'timeout_seconds', 'target', 'secret', "
        "'output_chars'. Did you mean 'concurrency_safe'?",
    )


def test_an_unknown_tool_kind_lists_the_kinds(tmp_path: Path) -> None:
    assert_error(
        write(tmp_path, VALID.replace("kind: append", "kind: apend")),
        "4:17: tools.notes.kind: not an allowed value: got 'apend'; expected one of 'append', "
        "'send', 'put', 'read', 'inspect'. Did you mean 'append'?",
    )


UNKNOWN_STAL = (
    "faults[0].kind: unknown fault kind: got 'stal'; expected one of 'http_error', "
    "'truncated_tool_arguments', 'invalid_tool_arguments', 'doom_loop', 'inject_comments', "
    "'inject_pings', 'malformed_frame', 'error_in_stream', 'no_terminal_event', "
    "'no_usage_chunk', 'empty_body', 'line_endings', 'split_at', 'byte_at_a_time', "
    "'random_splits', 'split_inside_utf8', 'split_inside_data_field', "
    "'split_between_cr_lf', 'stall', 'connection_reset', 'slow_drip', "
    "'stall_before_headers', 'stall_connecting'. Did you mean 'stall'?")


def test_an_unknown_fault_kind_lists_the_kinds(tmp_path: Path) -> None:
    error = assert_error(
        write(tmp_path, VALID + "faults:\n  - {at: {turn: 1}, kind: stal, seconds: 1, "
              "after_bytes: 5}\n"),
        "11:27: " + UNKNOWN_STAL,
    )
    assert error.value == "stal"


def test_a_fault_entrys_mistakes_are_reported_in_one_pass(tmp_path: Path) -> None:
    # Before, the unknown kind hid the missing field, which hid the unreachable turn:
    # three rounds of fix-and-rerun for one entry.
    assert_error(
        write(tmp_path, VALID + "faults:\n  - {at: {turn: 7}, kind: stal}\n"),
        "11:5: faults[0]: missing 'after_bytes' or 'after_events'; expected exactly one of "
        "them, such as 'after_bytes: 120'",
        "11:17: faults[0].at.turn: turn is never reached by the script: got 7; expected a turn "
        "from 1 to 1 (the last scripted turn)",
        "11:27: " + UNKNOWN_STAL,
    )


def test_world_crash_points_no_run_reaches_are_errors_at_their_line(tmp_path: Path) -> None:
    # Before, both loaded, and the run reported their cases unknown.
    text = VALID.replace("expect:", "crash:\n  points: [after_tool:ntoes#1, mid_stream:9, "
                         "after_tool:notes#2]\nexpect:")
    assert_error(
        write(tmp_path, text),
        "9:12: crash.points[0]: the crash point names a tool the scenario does not declare: "
        "got 'after_tool:ntoes#1'; expected one of 'after_tool:notes#1'. Did you mean "
        "'after_tool:notes#1'?",
        "9:32: crash.points[1]: the crash point's turn is past the script: got "
        "'mid_stream:9'; expected a turn from 1 to 1 (the last scripted turn). Did you mean "
        "'mid_stream:1'?",
    )


def test_an_unknown_behaviour_kind_lists_the_kinds(tmp_path: Path) -> None:
    assert_error(
        write(tmp_path, VALID.replace("{kind: append}", "{kind: append, behaviour: {kind: slo}}")),
        "4:43: tools.notes.behaviour.kind: unknown behaviour kind: got 'slo'; expected one of "
        "'instant', 'slow', 'failing', 'reply_lost', 'hanging', 'ignores_cancellation', "
        "'subprocess'. "
        "Did you mean 'slow'?",
    )


def test_a_wrong_type_says_what_came_and_what_was_expected(tmp_path: Path) -> None:
    error = assert_error(
        write(tmp_path, VALID + "seed: seven\n"),
        "10:7: seed: wrong type: got 'seven' (a string); expected an integer >= 0",
    )
    assert (error.value, error.expected) == ("seven", "an integer >= 0")


def test_a_quoted_number_is_not_silently_converted(tmp_path: Path) -> None:
    assert_error(
        write(tmp_path, VALID + "budget: {max_turns: '8', max_attempts: true}\n"),
        "10:21: budget.max_turns: wrong type: got '8' (a string); expected an integer >= 1",
        "10:40: budget.max_attempts: wrong type: got true (a boolean); expected an integer >= 1",
    )


def test_bounds_and_finite_numbers(tmp_path: Path) -> None:
    assert_error(
        write(tmp_path, VALID + "budget: {max_turns: 0, deadline_seconds: .inf}\n"),
        "10:21: budget.max_turns: out of range: got 0; expected an integer >= 1",
        "10:42: budget.deadline_seconds: not a finite number: got inf; expected a finite number",
    )


def test_a_bound_names_the_fields_type_not_the_values(tmp_path: Path) -> None:
    # seconds are a number: -1, written as an integer, was told "an integer >= 0.0".
    assert_error(
        write(tmp_path, VALID + "faults:\n"
              "  - {at: {turn: 1}, kind: stall, after_events: 3, seconds: -1}\n"
              "budget: {max_cost_usd: -2.5}\n"),
        "11:60: faults[0].seconds: out of range: got -1; expected a number >= 0",
        "12:24: budget.max_cost_usd: out of range: got -2.5; expected a number > 0",
    )


def test_missing_keys_point_at_their_mapping_with_an_example(tmp_path: Path) -> None:
    assert_error(
        write(tmp_path, "name: Bad_Name\nmodel: []\n"),
        "1:1: scenario: missing required key 'dialect'; expected one of 'openai', 'anthropic', "
        "'openai-responses', 'gemini'. Add, for example, 'dialect: openai'",
        "1:1: scenario: missing required key 'expect'; expected a mapping. "
        "Add, for example, 'expect: {stop_state: complete}'",
        "1:7: name: badly formed: got 'Bad_Name'; expected lowercase letters, digits and '-', "
        "such as 'parallel-append-crash'",
        "2:8: model: too few items: got 0 items; expected at least 1 item",
    )


def test_a_fault_without_kind(tmp_path: Path) -> None:
    assert_error(
        write(tmp_path, VALID + "faults:\n  - at: {turn: 1}\n    seconds: 3\n"),
        "11:5: faults[0]: missing required key 'kind'; expected one of 'http_error', "
        "'truncated_tool_arguments', 'invalid_tool_arguments', 'doom_loop', "
        "'inject_comments', 'inject_pings', 'malformed_frame', 'error_in_stream', "
        "'no_terminal_event', 'no_usage_chunk', 'empty_body', 'line_endings', 'split_at', "
        "'byte_at_a_time', "
        "'random_splits', 'split_inside_utf8', 'split_inside_data_field', "
        "'split_between_cr_lf', 'stall', 'connection_reset', 'slow_drip', "
        "'stall_before_headers', 'stall_connecting'",
    )


def test_exclusive_fields_need_exactly_one(tmp_path: Path) -> None:
    assert_error(
        write(tmp_path, VALID + "faults:\n"
              "  - {at: {turn: 1}, kind: stall, after_bytes: 1, after_events: 2, seconds: 1}\n"
              "  - {at: {turn: 1}, kind: connection_reset}\n"),
        "11:50: faults[0]: 'after_bytes' and 'after_events' exclude each other: got both; "
        "expected exactly one of them",
        "12:5: faults[1]: missing 'after_bytes' or 'after_events'; expected exactly one of them, "
        "such as 'after_bytes: 120'",
    )


def test_http_error_status_and_retry_after(tmp_path: Path) -> None:
    assert_error(
        write(tmp_path, VALID + "faults:\n"
              "  - {at: {turn: 1}, kind: http_error, status: 418}\n"
              "  - {at: {turn: 1}, kind: http_error, status: 429, retry_after: soon}\n"),
        "11:47: faults[0].status: not an allowed value: got 418; expected one of 400, 401, 403, "
        "404, 408, 409, 413, 422, 429, 500, 502, 503, 504, 525, 526, 529",
        "12:65: faults[1].retry_after: retry_after is neither seconds nor an HTTP date: "
        "got 'soon'; expected whole seconds such as 60 or a date such as "
        "\"Wed, 21 Oct 2015 07:28:00 GMT\"",
    )


def test_a_value_of_two_types_gets_one_error_naming_the_type_it_missed(tmp_path: Path) -> None:
    # retry_after is whole seconds or an HTTP date: a bad value is one error, not one per
    # type it could have been, and says what both were.
    assert_error(
        write(tmp_path, VALID + "faults:\n"
              "  - {at: {turn: 1}, kind: http_error, status: 429, retry_after: -5}\n"
              "  - {at: {turn: 1}, kind: http_error, status: 429, retry_after: 1.5}\n"),
        "11:65: faults[0].retry_after: out of range: got -5; expected an integer >= 0",
        "12:65: faults[1].retry_after: wrong type: got 1.5 (a number); "
        "expected an integer >= 0 or text",
    )


def test_cross_field_checks_point_at_the_offending_value(tmp_path: Path) -> None:
    text = """\
name: t
dialect: openai
tools: {notes: {kind: append}}
model:
  - turn: 2
    calls: [{tool: note}]
faults:
  - {at: {turn: 5}, kind: no_usage_chunk}
expect:
  stop_state: complete
  side_effects: {mail: 1}
"""
    assert_error(
        write(tmp_path, text),
        "5:3: model: no reply for turn 1: got replies for turns [2]; expected a reply for every "
        "turn from 1 to 2",
        "6:20: model[0].calls[0].tool: tool is not declared: got 'note'; expected a tool under "
        "'tools': one of 'notes'. Did you mean 'notes'?",
        "8:17: faults[0].at.turn: turn is never reached by the script: got 5; expected a turn "
        "from 1 to 2 (the last scripted turn)",
        "11:18: expect.side_effects: tool is not declared: got 'mail'; expected a tool under "
        "'tools': one of 'notes'. Declare it under 'tools' with the kind of effect it has, "
        "such as 'mail: {kind: send}' (or append, put): side_effects counts only those",
    )


def test_two_default_replies_for_one_turn_are_ambiguous(tmp_path: Path) -> None:
    assert_error(
        write(tmp_path, VALID.replace("text: hi\n", "text: hi\n  - turn: 1\n    text: ho\n")),
        "6:5: model[0]: two replies for the same turn and 'when' leave the choice to chance: "
        "got another reply for turn 1; expected a different 'when' on one of them",
    )


def test_a_crash_point_of_an_operation_the_disk_never_counts_is_refused_at_its_line(
        tmp_path: Path) -> None:
    # run refused it only when the explorer met it, mid-run and without a line.
    error = assert_error(
        write(tmp_path, VALID + "crash: {points: ['goal:set_status#1']}\n"),
        "10:18: crash.points[0]: badly formed: got 'goal:set_status#1'; expected a point id "
        "'<role>:<op>#<n>' with op one of mkdir, create, write, fsync, fsync_dir, truncate, "
        "rename, unlink, rmdir, commit, such as 'journal:fsync#3', or a world event: "
        "'after_tool:<tool>#<k>', 'before_request:<turn>', 'mid_stream:<turn>', "
        "'after_response:<turn>'; 'all' in a list adds every point of the agent's own files",
    )
    assert error is not None


def test_crash_points_and_classes(tmp_path: Path) -> None:
    assert_error(
        write(tmp_path, VALID + "crash: {points: [bad, 'journal:fsync#1'], classes: [lost]}\n"),
        "10:18: crash.points[0]: badly formed: got 'bad'; expected a point id "
        "'<role>:<op>#<n>' with op one of mkdir, create, write, fsync, fsync_dir, truncate, "
        "rename, unlink, rmdir, commit, such as 'journal:fsync#3', or a world event: "
        "'after_tool:<tool>#<k>', 'before_request:<turn>', 'mid_stream:<turn>', "
        "'after_response:<turn>'; 'all' in a list adds every point of the agent's own files",
        "10:53: crash.classes[0]: not an allowed value: got 'lost'; expected one of "
        "'unsynced_lost', 'torn_append_short', 'torn_append_zeros', 'torn_append_garbage', "
        "'missing_dir_fsync', 'process_killed', 'eio_on_write', 'eio_on_fsync', "
        "'enospc_on_write'",
    )
    assert_error(
        write(tmp_path, VALID + "crash: {points: 3}\n"),
        "10:17: crash.points: wrong type: got 3 (an integer); expected one of 'all', 'none' "
        "or a list",
    )


def test_a_date_in_tool_arguments_is_not_json(tmp_path: Path) -> None:
    assert_error(
        write(tmp_path, VALID.replace("text: hi", "text: hi\n    calls: [{tool: notes, args: {d: "
                                      "2024-01-01}}]")),
        "8:37: model[0].calls[0].args.d: not a JSON value: got 2024-01-01 (a date); expected "
        "text, a number, true, false, null, a list or a mapping. Quote dates and times, "
        "such as '\"2024-01-01\"'",
    )


def test_malformed_yaml_gives_the_parser_position(tmp_path: Path) -> None:
    assert_error(write(tmp_path, "name: [t,\n"),
                 "2:1: invalid YAML: expected the node content, but found '<stream end>'")
    assert_error(
        write(tmp_path, "name: t\nmodel:\n\t- turn: 1\n"),
        "3:1: invalid YAML: found character '\\t' that cannot start any token. "
        "Indent with spaces: YAML does not allow tabs there",
    )


def test_duplicate_keys_are_refused(tmp_path: Path) -> None:
    assert_error(
        write(tmp_path, "name: a\nname: b\n"),
        "2:1: invalid YAML: found duplicate key \"name\" with value \"b\" (original value: "
        "\"a\"). Each key may appear once per mapping; remove or rename one",
    )


def test_two_documents_in_one_file(tmp_path: Path) -> None:
    assert_error(
        write(tmp_path, "name: a\n---\nname: b\n"),
        "2:1: invalid YAML: but found another document. "
        "A scenario file holds one YAML document; split it into two files",
    )


@pytest.mark.parametrize("text", ["", "# only a comment\n", "---\n"])
def test_an_empty_file(tmp_path: Path, text: str) -> None:
    assert_error(write(tmp_path, text),
                 "1:1: the scenario file is empty; expected a mapping with at least 'name', "
                 "'dialect', 'model' and 'expect'")


def test_a_top_level_that_is_not_a_mapping(tmp_path: Path) -> None:
    assert_error(write(tmp_path, "- 1\n- 2\n"),
                 "1:1: the top level is not a mapping: got [1, 2] (a list); expected a mapping "
                 "with at least 'name', 'dialect', 'model' and 'expect'")
    assert_error(write(tmp_path, "just text\n"),
                 "1:1: the top level is not a mapping: got 'just text' (a string); expected a "
                 "mapping with at least 'name', 'dialect', 'model' and 'expect'")


def test_a_file_that_is_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_bytes("name: t\ndescription: caf\xe9\n".encode("latin-1"))
    assert_error(path, "2:17: the file is not valid UTF-8: got byte 0xe9; expected UTF-8 text. "
                 "Save the file as UTF-8")


def test_a_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "nope.yaml"
    message = f"{path}: cannot read the scenario file: No such file or directory; expected a " \
        "readable YAML file"
    with pytest.raises(ScenarioError, match=f"^{re.escape(message)}$") as caught:
        load_scenario(path)
    assert (caught.value.line, caught.value.column) == (None, None)


def test_validate_paths_collects_every_error_of_every_file(tmp_path: Path) -> None:
    first = write(tmp_path, VALID + "seed: -1\ndescripton: x\n", "a.yaml")
    write(tmp_path, VALID, "b.yaml")
    third = write(tmp_path, "", "c.yaml")

    errors = validate_paths([tmp_path])

    assert [(e.path, e.line, e.column) for e in errors] == [
        (str(first), 10, 7), (str(first), 11, 1), (str(third), 1, 1)
    ]
    with pytest.raises(ScenarioError) as caught:
        load_scenarios([tmp_path])
    assert str(caught.value).splitlines() == [e.message for e in errors]
    assert [e.message for e in caught.value.errors] == [e.message for e in errors]


def test_duplicate_names_across_files(tmp_path: Path) -> None:
    first = write(tmp_path, VALID, "a.yaml")
    second = write(tmp_path, VALID, "b.yaml")
    with pytest.raises(ScenarioError, match=f"^{re.escape(str(second))}:1:7: name: scenario name "
                       f"is already used: got 't'; expected a name unique in the suite "
                       f"\\({re.escape(str(first))}:1:7 has it\\)$"):
        load_scenarios([tmp_path])


def test_a_folder_without_scenarios(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match=f"^{re.escape(str(tmp_path))}: no scenario files in "
                       "this folder; expected files ending in .yaml$"):
        load_scenarios([tmp_path])


def test_a_control_character(tmp_path: Path) -> None:
    assert_error(write(tmp_path, "name: t\nx: a\x01b\n"),
                 "2:5: invalid YAML: special characters are not allowed: got character U+0001; "
                 "expected printable text")


# -- the goal and verifier blocks (seed 002 §19.2-§19.3) ----------------------------

_EXPECT = "expect:\n  stop_state: complete\n"


def _goal_error(tmp_path: Path, blocks: str, *lines: str) -> None:
    """``blocks`` go between the valid file's model and its expect (from line 8 on)."""
    __tracebackhide__ = True
    assert_error(write(tmp_path, VALID.removesuffix(_EXPECT) + blocks + _EXPECT), *lines)


def test_a_verifier_without_a_goal_is_refused(tmp_path: Path) -> None:
    _goal_error(tmp_path, "verifier:\n  - verdict: pass\n",
                "9:3: verifier: a verifier judges a goal, and none is declared; expected a "
                "'goal' block beside 'verifier'")


def test_a_goal_without_a_verifier_is_refused(tmp_path: Path) -> None:
    _goal_error(tmp_path, "goal: {id: g, objective: o, acceptance: [a]}\n",
                "8:7: goal: a goal without a verifier can never be proven complete; expected "
                "a 'verifier' list, such as [{verdict: pass}]")


def test_each_mistake_in_the_blocks_is_located(tmp_path: Path) -> None:
    _goal_error(tmp_path, """\
goal:
  id: g-1
  objective: ship it
  acceptance: [tests pass]
  restart_policy: resume
  edits:
    - {at_seconds: 5}
verifier:
  - verdict: fail
  - when: {revision: 3, applied: {note: 1}}
    verdict: pass
    gaps: [x]
""",
        "12:19: goal.restart_policy: not an allowed value: got 'resume'; expected one of "
        "'continue', 'pause'",
        "14:7: goal.edits[0]: an edit that changes nothing; expected 'objective', 'acceptance' "
        "or both",
        "16:5: verifier[0].gaps: a fail without gaps gives the rework nothing to do; expected "
        "gaps: [\"what is missing\", ...]",
        "17:35: verifier[1].when.applied: tool is not declared: got 'note'; expected a tool "
        "under 'tools': one of 'notes'. Did you mean 'notes'?",
        "19:11: verifier[1].gaps: a pass verdict names no gaps; expected gaps only with "
        "verdict: fail")


def test_a_rule_names_only_revisions_and_tools_that_exist(tmp_path: Path) -> None:
    _goal_error(tmp_path, """\
goal:
  id: g-1
  objective: ship it
  acceptance: [tests pass]
  edits: [{at_seconds: 5, objective: ship it twice}]
verifier:
  - when: {revision: 3, applied: {note: 1}}
    verdict: pass
""",
        "14:22: verifier[0].when.revision: revision is never reached: got 3; expected 1 to 2 "
        "(1 plus one per edit)",
        "14:35: verifier[0].when.applied: tool is not declared: got 'note'; expected a tool "
        "under 'tools': one of 'notes'. Did you mean 'notes'?")
@pytest.mark.parametrize(("extra", "line"), [
    ("provider:\n  outages: [{start_seconds: 30, end_seconds: 10}]\n",
     "11:46: provider.outages[0].end_seconds: the outage ends before it starts: got 10.0; "
     "expected a time after start_seconds (30)"),
    ("provider:\n  outages: [{start_seconds: 0, end_seconds: 10, answer: 404}]\n",
     "11:57: provider.outages[0].answer: not an allowed value: got 404; expected one of 500, "
     "502, 503, 529, 'connection_reset', 'stall'"),
    ("provider: {context_window: 8}\n",
     "10:28: provider.context_window: out of range: got 8; expected an integer >= 16"),
    ("budget: {max_cost_usd: 1}\n",
     "10:24: budget.max_cost_usd: a cost budget needs a priced model: got provider.model "
     "'fake-model'; expected one of 'fake-gpt', 'fake-gpt-mini', 'fake-haiku', 'fake-opus', "
     "'fake-sonnet', or a real model genai-prices knows. Name one as provider.model, price "
     "yours with --prices FILE, or drop max_cost_usd"),
    ("provider: {model: fake-gpt, backup_model: fake-gpt}\n",
     "10:43: provider.backup_model: the backup model is the primary model: got 'fake-gpt'; "
     "expected a model other than provider.model. Name another model, or drop backup_model: "
     "switching to the same model is one more retry of it"),
    ("provider: {backup_model: 7}\n",
     "10:26: provider.backup_model: wrong type: got 7 (an integer); expected text"),
    ("provider: {backup: fake-gpt}\n",
     "10:12: provider: unknown key: got 'backup'; expected one of 'model', 'backup_model', "
     "'prompt_cache', 'server_miss_rate', 'latency', 'context_window', 'max_output_tokens', "
     "'outages', 'quota'. Did you mean 'backup_model'?"),
    ("provider:\n  model: fake-gpt\n  backup_model: fake-gpt-mini\n"
     "  outages: [{start_seconds: 0, end_seconds: 10, model: fake-gtp}]\n",
     "13:56: provider.outages[0].model: no request names this model: got 'fake-gtp'; expected "
     "the provider's model or its backup: one of 'fake-gpt', 'fake-gpt-mini'. Did you mean "
     "'fake-gpt'?"),
    ("  breaker: {failures_to_open: 0}\n",
     "10:31: expect.breaker.failures_to_open: out of range: got 0; expected an integer >= 1"),
])
def test_the_long_run_blocks_are_checked_where_they_stand(tmp_path: Path, extra: str,
                                                          line: str) -> None:
    assert_error(write(tmp_path, VALID + extra), line)


def test_a_second_crash_needs_a_first_and_a_point_the_script_reaches(tmp_path: Path) -> None:
    assert_error(
        write(tmp_path, VALID + "crash: {then: 'after_tool:notes#1'}\n"),
        "10:15: crash.then: a second crash needs a first one: got 'after_tool:notes#1'; "
        "expected crash points besides 'none'. Set crash.points (such as 'all') or remove 'then'",
    )
    assert_error(
        write(tmp_path, VALID + "crash: {points: all, during_recovery: true, "
                                "then: 'notes:write#2'}\n"),
        "10:51: crash.then: 'then' and 'during_recovery' both place the second crash: got "
        "'notes:write#2'; expected one of them. Keep 'then' to crash at a chosen point, or "
        "'during_recovery' to crash at the first point the recovery reaches",
    )
    assert_error(
        write(tmp_path, VALID + "crash: {points: all, then: 'after_tool:ntoes#1'}\n"),
        "10:28: crash.then: the crash point names a tool the scenario does not declare: got "
        "'after_tool:ntoes#1'; expected one of 'after_tool:notes#1'. Did you mean "
        "'after_tool:notes#1'?",
    )


def test_cache_breakpoints_is_a_yes_or_no_for_an_anthropic_prompt_cache(tmp_path: Path) -> None:
    anthropic = VALID.replace("dialect: openai", "dialect: anthropic")
    cached = anthropic.replace("model:", "provider: {prompt_cache: true}\nmodel:")
    assert load_scenario(write(tmp_path, cached.replace(
        "model:", "cache_breakpoints: true\nmodel:"), "ok.yaml")).cache_breakpoints
    assert_error(write(tmp_path, cached.replace("model:", "cache_breakpoints: \"yes\"\nmodel:")),
                 "6:20: cache_breakpoints: wrong type: got 'yes' (a string); expected true or "
                 "false")
    openai = VALID.replace("model:", "provider: {prompt_cache: true}\ncache_breakpoints: true\n"
                           "model:")
    assert_error(write(tmp_path, openai, "o.yaml"), "6:20: cache_breakpoints: only the anthropic "
                 "API caches at marked breakpoints: got true with dialect openai; expected "
                 "dialect: anthropic. Remove it: the openai API caches prompt prefixes without "
                 "marks")
    uncached = anthropic.replace("model:", "cache_breakpoints: true\nmodel:")
    assert_error(write(tmp_path, uncached, "u.yaml"), "5:20: cache_breakpoints: breakpoints mark "
                 "what a prompt cache keeps: got true without provider.prompt_cache; expected "
                 "provider: {prompt_cache: true}. Add prompt_cache: true under provider:, or "
                 "remove cache_breakpoints")


def test_a_hook_runs_a_declared_tool_that_changes_nothing(tmp_path: Path) -> None:
    undeclared = VALID.replace("model:", "hook: {run: note}\nmodel:")
    assert_error(write(tmp_path, undeclared), "5:13: hook.run: the hook runs a tool the "
                 "scenario does not declare: got 'note'; expected a tool under tools: one of "
                 "'notes'. Did you mean 'notes'?")
    writer = VALID.replace("model:", "hook: {run: notes, max_depth: 2}\nmodel:")
    assert_error(write(tmp_path, writer, "w.yaml"), "5:13: hook.run: a hook's tool must change "
                 "nothing: got 'notes' of kind append; expected a tool of kind read or inspect. "
                 "Give the hook a read or inspect tool")


def test_a_protected_path_is_written_as_a_call_names_its_path(tmp_path: Path) -> None:
    _goal_error(tmp_path, """\
goal:
  id: g-1
  objective: ship it
  acceptance: [tests pass]
  protected: [./tests//*, /src/*.py, "..", tests/, "../docs/*", " tests/*", 'a\\b', tests/*]
verifier:
  - verdict: pass
""",
        "12:15: goal.protected[0]: a protected path is compared with a call's path as written "
        "plainly: got './tests//*'; expected 'tests/*'",
        "12:27: goal.protected[1]: a protected path is compared with a call's path as written "
        "plainly: got '/src/*.py'; expected 'src/*.py'",
        "12:38: goal.protected[2]: a protected path must lie below the workspace: got '..'; "
        "expected a path below the workspace, such as 'tests/*'",
        "12:44: goal.protected[3]: a folder matches no call's path; its files do: got "
        "'tests/'; expected 'tests/*'",
        "12:52: goal.protected[4]: a protected path must lie below the workspace: got "
        "'../docs/*'; expected a path below the workspace, such as 'tests/*'",
        "12:65: goal.protected[5]: spaces around a protected path match no call's path: got "
        "' tests/*'; expected 'tests/*'",
        "12:77: goal.protected[6]: a protected path is compared with '/' between its parts (a "
        "backslash is a character of a name here): got 'a\\\\b'; expected 'a/b'")
def test_a_long_output_and_its_inline_limit_are_bounded(tmp_path: Path) -> None:
    text = VALID.replace("{kind: append}", "{kind: read, output_chars: 0}") \
        + "  max_tool_result_chars: 100\n"
    assert_error(
        write(tmp_path, text),
        "4:37: tools.notes.output_chars: out of range: got 0; expected an integer >= 1",
        "10:26: expect.max_tool_result_chars: out of range: got 100; expected an integer >= 500",
    )
    text = VALID.replace("{kind: append}", "{kind: read, output_chars: 5000001}") \
        + "  max_tool_result_chars: many\n"
    assert_error(
        write(tmp_path, text),
        "4:37: tools.notes.output_chars: out of range: got 5000001; expected an integer "
        "<= 5000000",
        "10:26: expect.max_tool_result_chars: wrong type: got 'many' (a string); expected an "
        "integer >= 500",
    )
