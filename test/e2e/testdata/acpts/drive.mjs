// Drives `odin acp` with the ACP TypeScript SDK's client from npm
// (@agentclientprotocol/sdk): initialize, session/new, prompts with
// streamed updates, permission requests answered, cancel, session/load in a
// second process. Usage: node drive.mjs ODIN ROOT. Prints "ok" or fails.
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import assert from "node:assert/strict";
import * as acp from "@agentclientprotocol/sdk";

const [odin, root] = process.argv.slice(2);

function start(answers, updates) {
  const child = spawn(odin, ["acp"], { cwd: root, stdio: ["pipe", "pipe", "inherit"] });
  const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
  const app = acp
    .client({ name: "odin-e2e" })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      updates.push(params.update);
    })
    .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
      const optionId = answers.shift();
      assert.ok(optionId, `unexpected permission request ${JSON.stringify(params.toolCall)}`);
      assert.ok(params.options.some((o) => o.optionId === optionId), `no option ${optionId}`);
      updates.push({ sessionUpdate: "permission", title: params.toolCall.title });
      return { outcome: { outcome: "selected", optionId } };
    });
  const conn = app.connect(stream);
  return { child, agent: conn.agent, conn };
}

async function stop(p) {
  const exited = new Promise((res) => p.child.on("exit", (code) => res(code)));
  p.child.stdin.end();
  assert.equal(await exited, 0, "odin acp exit code");
}

const text = (us, kind) =>
  us.filter((u) => u.sessionUpdate === kind && u.content?.type === "text").map((u) => u.content.text).join("");

const updates = [];
const answers = ["deny", "once"];
const p = start(answers, updates);
const init = await p.agent.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
assert.equal(init.agentCapabilities.loadSession, true);
const { sessionId, modes } = await p.agent.request(acp.methods.agent.session.new, { cwd: root, mcpServers: [] });
assert.deepEqual(modes.availableModes.map((m) => m.id), ["ask", "plan", "edit"]);

let r = await p.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "what is in main.go?" }] });
assert.equal(r.stopReason, "end_turn");
assert.equal(text(updates, "agent_message_chunk"), "It is a Go main package.");
const read = updates.find((u) => u.sessionUpdate === "tool_call");
assert.equal(read.kind, "read");
assert.equal(read.locations[0].path, root + "/main.go");
assert.ok(updates.some((u) => u.sessionUpdate === "tool_call_update" && u.status === "completed"));

updates.length = 0;
r = await p.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "delete keep.txt" }] });
assert.match(updates.find((u) => u.sessionUpdate === "permission").title, /rm keep\.txt/);
assert.equal(text(updates, "agent_message_chunk"), "I was not allowed to.");

updates.length = 0;
r = await p.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "delete keep.txt now" }] });
assert.equal(text(updates, "agent_message_chunk"), "Deleted keep.txt.");
assert.equal(answers.length, 0, "both permission requests were asked");

const slow = p.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "take your time" }] });
await new Promise((res) => setTimeout(res, 1500));
await p.agent.notify(acp.methods.agent.session.cancel, { sessionId });
assert.equal((await slow).stopReason, "cancelled");
await stop(p);

const replayed = [];
const p2 = start([], replayed);
await p2.agent.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
await p2.agent.request(acp.methods.agent.session.load, { sessionId, cwd: root, mcpServers: [] });
assert.match(text(replayed, "user_message_chunk"), /what is in main\.go\?.*delete keep\.txt/s);
assert.match(text(replayed, "agent_message_chunk"), /It is a Go main package\./);
await stop(p2);
console.log("ok");
