// The careful agent: the conversation is saved after every step (written whole, fsynced,
// renamed into place), and each tool call is journalled durably before and after its side
// effect. After a kill it resumes the conversation; a call that started and never finished
// is answered "unknown: inspect before repeating", never run again blindly.
import fs from "node:fs";
import { callTool, converse } from "./loop.mjs";

const CONVERSATION = "conversation.json";
const JOURNAL = "journal.jsonl";

function durableWrite(path, text) {
  const fd = fs.openSync(`${path}.tmp`, "w");
  fs.writeSync(fd, text);
  fs.fsyncSync(fd);
  fs.closeSync(fd);
  fs.renameSync(`${path}.tmp`, path);
}

function journal(record) {
  const fd = fs.openSync(JOURNAL, "a");
  fs.writeSync(fd, JSON.stringify(record) + "\n");
  fs.fsyncSync(fd);
  fs.closeSync(fd);
}

// The last record of each call id ("started" or "done" with its result).
function journalled() {
  if (!fs.existsSync(JOURNAL)) return new Map();
  const lines = fs.readFileSync(JOURNAL, "utf8").split("\n").filter((line) => line.trim());
  const last = new Map();
  for (const line of lines) {
    try {
      const record = JSON.parse(line);
      last.set(record.call, record);
    } catch {
      // A torn last line: that record never became durable.
    }
  }
  return last;
}

async function runTool(call) {
  journal({ call: call.id, state: "started", tool: call.function.name });
  const result = JSON.stringify(
    await callTool(call.function.name, JSON.parse(call.function.arguments || "{}")));
  journal({ call: call.id, state: "done", result });
  return result;
}

// Answer the calls of the last assistant message that have no reply yet, from the journal.
async function repair(messages) {
  const last = messages.findLastIndex((m) => m.role === "assistant");
  if (last < 0 || !messages[last].tool_calls) return;
  const answered = new Set(messages.slice(last).map((m) => m.tool_call_id).filter(Boolean));
  const records = journalled();
  for (const call of messages[last].tool_calls) {
    if (answered.has(call.id)) continue;
    const record = records.get(call.id);
    let content;
    if (record?.state === "done") content = record.result;
    else if (record?.state === "started")
      content = JSON.stringify({ status: "unknown", note: "the agent died while this ran; " +
        "inspect the real state before repeating it" });
    else content = await runTool(call); // never started: running it now is its first run
    messages.push({ role: "tool", tool_call_id: call.id, content });
  }
}

const save = (messages) => durableWrite(CONVERSATION, JSON.stringify(messages));
const messages = fs.existsSync(CONVERSATION)
  ? JSON.parse(fs.readFileSync(CONVERSATION, "utf8"))
  : [{ role: "user", content: process.env.HARNESS_PROMPT }];
await repair(messages);
save(messages);
console.log(await converse(messages, runTool, save));
