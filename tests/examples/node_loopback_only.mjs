// Preloaded into a Node.js agent under test (`node --import …/node_loopback_only.mjs agent.mjs`):
// the agent may reach the harness's server on the loopback and nothing else. A request to
// any other host (a tracing exporter's, a usage ping) is not made: the process says which
// on stderr and exits 97, so the case fails with that line as its reason. The agent's own
// code is not touched; `fetch` and the name lookup every other client goes through are.
import dns from "node:dns";

const LOOPBACK = new Set(["127.0.0.1", "localhost", "::1", "[::1]"]);

function refuse(what) {
  process.stderr.write(`loopback only: refused ${what}\n`);
  process.exit(97);
}

const realFetch = globalThis.fetch;
globalThis.fetch = function fetch(input, init) {
  const url = new URL(typeof input === "string" || input instanceof URL ? input : input.url);
  if (!LOOPBACK.has(url.hostname)) refuse(`${init?.method ?? input?.method ?? "GET"} ${url}`);
  return realFetch(input, init);
};

const realLookup = dns.lookup;
dns.lookup = function lookup(hostname, ...rest) {
  if (!LOOPBACK.has(hostname)) refuse(`the lookup of ${hostname}`);
  return realLookup.call(this, hostname, ...rest);
};
