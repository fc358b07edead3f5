// A mail assistant on the Vercel AI SDK, as its tool-calling and message-persistence docs
// show: `generateText` with the `openai` provider (the Responses API; OPENAI_API_KEY and
// OPENAI_BASE_URL from the environment), tools made with `tool()` and a zod input schema,
// the loop run by `stopWhen: stepCountIs(10)`, and the conversation kept in
// `messages.json` (the messages so far, the run's `response.messages` appended when it
// ends), so a second run goes on with the same conversation.
//
//   TOOLS_URL=https://tools.example.com node ai_sdk_agent.mjs "Mail ops: deploy 42 approved."
//
// The tools reach the company's tool gateway: POST $TOOLS_URL/NAME with the JSON arguments.
import fs from "node:fs";
import { openai } from "@ai-sdk/openai";
import { generateText, stepCountIs, tool } from "ai";
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

const tools = {
  send_mail: tool({
    description: "Send an e-mail.",
    inputSchema: z.object({
      to: z.string().describe("The recipient's address."),
      subject: z.string().describe("The subject line."),
      body: z.string().describe("The text of the mail."),
    }),
    execute: async (args) => gateway("send_mail", args),
  }),
  append_note: tool({
    description: "Append a line to the team's notes.",
    inputSchema: z.object({ text: z.string().describe("The line to append.") }),
    execute: async (args) => gateway("append_note", args),
  }),
  read_outbox: tool({
    description: "List the e-mails sent today.",
    inputSchema: z.object({}),
    execute: async () => gateway("read_outbox", {}),
  }),
};

const HISTORY = "messages.json";
const messages = fs.existsSync(HISTORY) ? JSON.parse(fs.readFileSync(HISTORY, "utf8")) : [];
messages.push({ role: "user", content: process.argv[2] });

const result = await generateText({
  model: openai("gpt-4o-mini"),
  system: "You are an office assistant. Use the tools to send mail and keep notes.",
  messages,
  tools,
  stopWhen: stepCountIs(10),
});
fs.writeFileSync(HISTORY, JSON.stringify([...messages, ...result.response.messages]));
console.log(result.text);
