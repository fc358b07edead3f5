// The naive agent: keeps nothing on disk. Killed after the mail went out, it starts the task
// over, the model asks for the mail again, and the CFO gets invoice 7 twice.
import { callTool, converse } from "./loop.mjs";

const messages = [{ role: "user", content: process.env.HARNESS_PROMPT }];
const answer = await converse(messages, async (call) =>
  JSON.stringify(await callTool(call.function.name, JSON.parse(call.function.arguments || "{}"))));
console.log(answer);
