"""The README's "Use it in your project", followed in an empty folder: its scenario, a
naive agent on the openai SDK as the layout there describes it, and its two commands.
It holds the README to what they do and to where the files go."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from harness._cli import main

ROOT = Path(__file__).resolve().parents[2]

AGENT = '''
import json

from openai import OpenAI

from myagent.tools import send_mail

TOOLS = [{"type": "function", "function": {
    "name": "mail", "description": "send a mail",
    "parameters": {"type": "object", "properties": {"to": {"type": "string"},
                                                    "body": {"type": "string"}}}}}]


def main(prompt: str) -> str:
    client = OpenAI()
    messages = [{"role": "user", "content": prompt}]
    while True:
        reply = client.chat.completions.create(model="gpt-4o-mini", messages=messages,
                                               tools=TOOLS)
        message = reply.choices[0].message
        if not message.tool_calls:
            return message.content or ""
        messages.append(message.model_dump(exclude_none=True))
        for call in message.tool_calls:
            result = send_mail(**json.loads(call.function.arguments))
            messages.append({"role": "tool", "tool_call_id": call.id, "content": str(result)})
'''

TOOLS = '''
def send_mail(to: str, body: str) -> str:
    raise RuntimeError("the real mail service: never called under the harness")
'''


def section() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    start = readme.index("## Use it in your project")
    return readme[start:readme.index("\n## ", start + 1)]


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    pytest.importorskip("openai")
    (tmp_path / "myagent").mkdir()
    (tmp_path / "myagent" / "__init__.py").write_text("")
    (tmp_path / "myagent" / "agent.py").write_text(AGENT)
    (tmp_path / "myagent" / "tools.py").write_text(TOOLS)
    scenario = re.search(r"```yaml\n(# chaos/mail-once\.yaml.*?)```", section(), re.S)
    assert scenario is not None, "the README's scenario block"
    (tmp_path / "chaos").mkdir()
    (tmp_path / "chaos" / "mail-once.yaml").write_text(scenario.group(1))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_the_walkthrough_does_what_the_readme_says(project: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    text = section()
    assert "harness validate chaos --agent myagent.agent:main" in text
    assert main(["validate", "chaos", "--agent", "myagent.agent:main"]) == 0
    assert "harness run chaos --agent myagent.agent:main        # exit 1: a naive agent " \
           "mails twice (I1)" in text
    assert main(["run", "chaos", "--agent", "myagent.agent:main"]) == 1
    out = capsys.readouterr().out
    assert "FAILED mail-once[after_tool:mail#1:at:process_killed]" in out
    assert "I1: 1 non-idempotent effect(s) applied more than once" in out
    # Where the files go: results/ in the folder it ran from, and nothing else.
    assert sorted(p.name for p in project.iterdir()) == ["chaos", "myagent", "results"]
    assert sorted(p.name for p in (project / "results").iterdir()) == [
        "attempts.jsonl", "attempts.parquet", "cases.jsonl", "cases.parquet", "manifest.json"]


def test_the_package_name_the_readme_installs_is_the_project_s() -> None:
    name = re.search(r'^name = "([^"]+)"', (ROOT / "pyproject.toml").read_text(), re.M)
    assert name is not None
    text = section()
    assert f"`{name.group(1)}`" in text
    assert f'"{name.group(1)} @ git+https://' in text
    wheel = name.group(1).replace("-", "_")
    assert f"dist/{wheel}-" in text
