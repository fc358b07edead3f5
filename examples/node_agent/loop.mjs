// What both example agents share: the model loop over the official `openai` package, and
// a tool call as a plain HTTP POST to the harness's tool endpoint. Nothing here knows about
// crashes; naive.mjs and careful.mjs differ only in what they keep on disk.
import OpenAI from "openai";

const client = new OpenAI(); // OPENAI_BASE_URL and OPENAI_API_KEY come from the environment
const tools = JSON.parse(process.env.HARNESS_TOOLS ?? "[]").map((tool) => ({
  type: "function",
  function: { name: tool.name, description: tool.description, parameters: tool.parameters },
}));

// POST /_harness/tools/NAME with the JSON arguments; the answer is the tool's JSON result.
export async function callTool(name, args) {
  const response = await fetch(`${process.env.HARNESS_TOOLS_URL}/${name}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(args),
  });
  return await response.json();
}

// One streamed answer, gathered: its text and its complete tool calls.
async function ask(messages) {
  const stream = await client.chat.completions.create({
    model: process.env.HARNESS_MODEL ?? "fake-model",
    messages,
    tools,
    stream: true,
    stream_options: { include_usage: true },
  });
  let text = "";
  const calls = [];
  for await (const chunk of stream) {
    const delta = chunk.choices?.[0]?.delta;
    text += delta?.content ?? "";
    for (const part of delta?.tool_calls ?? []) {
      calls[part.index] ??= { id: "", type: "function", function: { name: "", arguments: "" } };
      const call = calls[part.index];
      call.id = part.id ?? call.id;
      call.function.name += part.function?.name ?? "";
      call.function.arguments += part.function?.arguments ?? "";
    }
  }
  const message = { role: "assistant", content: text || null };
  if (calls.length) message.tool_calls = calls;
  return message;
}

// Ask, run the calls with `runTool(call) -> string`, answer them, until the model stops calling.
// `save(messages)` is called after every change, for an agent that keeps them.
export async function converse(messages, runTool, save = () => {}) {
  for (;;) {
    const message = await ask(messages);
    messages.push(message);
    save(messages);
    if (!message.tool_calls) return message.content ?? "";
    for (const call of message.tool_calls) {
      const content = await runTool(call);
      messages.push({ role: "tool", tool_call_id: call.id, content });
      save(messages);
    }
  }
}
