// A mail assistant on LangGraph.js, as its README and persistence docs write one: a
// `StateGraph` over `MessagesAnnotation` with an "agent" node calling `ChatOpenAI`
// (`@langchain/openai`; OPENAI_API_KEY and OPENAI_BASE_URL from the environment) bound to
// the tools, a prebuilt `ToolNode`, the edge from "agent" to "tools" while the model
// calls tools, and the graph compiled with a `SqliteSaver` checkpointer on
// `checkpoints.sqlite`: every run goes on with thread "mail", so a second run goes on
// with the same conversation.
//
//   TOOLS_URL=https://tools.example.com node langgraph_agent.mjs "Mail ops: deploy 42 approved."
//
// The tools reach the company's tool gateway: POST $TOOLS_URL/NAME with the JSON arguments.
import { HumanMessage, SystemMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { ToolNode } from "@langchain/langgraph/prebuilt";
import { ChatOpenAI } from "@langchain/openai";
import { z } from "zod";

async function gateway(name, args) {
  const response = await fetch(`${process.env.TOOLS_URL}/${name}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(args),
  });
  if (!response.ok) throw new Error(`${name}: HTTP ${response.status}`);
  return JSON.stringify(await response.json());
}

const sendMail = tool(async (args) => gateway("send_mail", args), {
  name: "send_mail",
  description: "Send an e-mail.",
  schema: z.object({
    to: z.string().describe("The recipient's address."),
    subject: z.string().describe("The subject line."),
    body: z.string().describe("The text of the mail."),
  }),
});
const appendNote = tool(async (args) => gateway("append_note", args), {
  name: "append_note",
  description: "Append a line to the team's notes.",
  schema: z.object({ text: z.string().describe("The line to append.") }),
});
const readOutbox = tool(async () => gateway("read_outbox", {}), {
  name: "read_outbox",
  description: "List the e-mails sent today.",
  schema: z.object({}),
});

const tools = [sendMail, appendNote, readOutbox];
const model = new ChatOpenAI({ model: "gpt-4o-mini" }).bindTools(tools);
const SYSTEM = "You are an office assistant. Use the tools to send mail and keep notes.";

async function callModel(state) {
  const response = await model.invoke([new SystemMessage(SYSTEM), ...state.messages]);
  return { messages: [response] };
}

function shouldContinue(state) {
  const last = state.messages[state.messages.length - 1];
  return last.tool_calls?.length ? "tools" : END;
}

const checkpointer = SqliteSaver.fromConnString("checkpoints.sqlite");
const app = new StateGraph(MessagesAnnotation)
  .addNode("agent", callModel)
  .addNode("tools", new ToolNode(tools))
  .addEdge(START, "agent")
  .addConditionalEdges("agent", shouldContinue, ["tools", END])
  .addEdge("tools", "agent")
  .compile({ checkpointer });

const finalState = await app.invoke(
  { messages: [new HumanMessage(process.argv[2])] },
  { configurable: { thread_id: "mail" } },
);
console.log(finalState.messages[finalState.messages.length - 1].content);
