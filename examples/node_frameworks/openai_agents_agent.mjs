// A mail assistant on the OpenAI Agents SDK for JavaScript (`@openai/agents`), as its
// README and tools guide write one: an `Agent` with three `tool()`s whose parameters are
// zod schemas, run by `run(agent, prompt)` on the SDK's default model provider (the
// Responses API; OPENAI_API_KEY and OPENAI_BASE_URL from the environment). Tracing is
// left on, as it is by default. The SDK ships no session that outlives the process
// (`MemorySession` keeps the conversation in memory, `OpenAIConversationsSession` on
// OpenAI's servers): each run starts a new conversation.
//
//   TOOLS_URL=https://tools.example.com node openai_agents_agent.mjs "Mail ops: deploy 42 approved."
//
// The tools reach the company's tool gateway: POST $TOOLS_URL/NAME with the JSON arguments.
import { Agent, run, tool } from "@openai/agents";
import { z } from "zod";

async function gateway(name, args) {
  const response = await fetch(`${process.env.TOOLS_URL}/${name}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(args),
  });
  if (!response.ok) throw new Error(`${name}: HTTP ${response.status}`);
  return await response.json();
}

const sendMail = tool({
  name: "send_mail",
  description: "Send an e-mail.",
  parameters: z.object({
    to: z.string().describe("The recipient's address."),
    subject: z.string().describe("The subject line."),
    body: z.string().describe("The text of the mail."),
  }),
  execute: async (args) => gateway("send_mail", args),
});
const appendNote = tool({
  name: "append_note",
  description: "Append a line to the team's notes.",
  parameters: z.object({ text: z.string().describe("The line to append.") }),
  execute: async (args) => gateway("append_note", args),
});
const readOutbox = tool({
  name: "read_outbox",
  description: "List the e-mails sent today.",
  parameters: z.object({}),
  execute: async () => gateway("read_outbox", {}),
});

const agent = new Agent({
  name: "Mail assistant",
  instructions: "You are an office assistant. Use the tools to send mail and keep notes.",
  model: "gpt-4.1-mini",
  tools: [sendMail, appendNote, readOutbox],
});

const result = await run(agent, process.argv[2]);
console.log(result.finalOutput);
