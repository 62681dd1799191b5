// Drives `odin acp` as an editor that offers terminals (terminal: true),
// with the ACP TypeScript SDK's client from npm (@agentclientprotocol/sdk).
// Its terminal/* methods really spawn the command they are given, in this
// process's environment, as an editor does. Checks: a command the user
// rejects never reaches terminal/create; an approved one runs in a
// terminal, shown on its tool call's card (live and in the final update);
// the terminals are released. Every byte a terminal printed is written
// to OUT for the Go test to search.
// Usage: node terminal.mjs ODIN ROOT OUT. Prints "ok" or fails.
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { Readable, Writable } from "node:stream";
import assert from "node:assert/strict";
import * as acp from "@agentclientprotocol/sdk";

const [odin, root, outFile] = process.argv.slice(2);
assert.ok(process.env.EDITOR_SECRET, "the editor's secret is in its environment");

const terminals = new Map(); // id → {child, output, exit, waiters}
const created = [];
let released = 0;
let nextId = 0;

function createTerminal(params) {
  const id = `term-${++nextId}`;
  created.push(params);
  // As an editor does: the command as given, in the editor's environment.
  const env = { ...process.env };
  for (const v of params.env ?? []) env[v.name] = v.value;
  const child = spawn(params.command, params.args ?? [], { cwd: params.cwd ?? root, env, stdio: ["ignore", "pipe", "pipe"] });
  const t = { child, output: "", exit: null, waiters: [] };
  const take = (b) => (t.output += b.toString("utf8"));
  child.stdout.on("data", take);
  child.stderr.on("data", take);
  child.on("close", (code, signal) => {
    t.exit = { exitCode: code, signal: signal ?? null };
    for (const w of t.waiters) w(t.exit);
  });
  terminals.set(id, t);
  return { terminalId: id };
}

const updates = [];
const child = spawn(odin, ["acp"], { cwd: root, stdio: ["pipe", "pipe", "inherit"] });
const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
const app = acp
  .client({ name: "odin-e2e-terminal" })
  .onNotification(acp.methods.client.session.update, ({ params }) => {
    updates.push(params.update);
  })
  .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
    const optionId = /rm keep\.txt/.test(params.toolCall.title ?? "") ? "deny" : "once";
    return { outcome: { outcome: "selected", optionId } };
  })
  .onRequest(acp.methods.client.terminal.create, ({ params }) => createTerminal(params))
  .onRequest(acp.methods.client.terminal.output, ({ params }) => {
    const t = terminals.get(params.terminalId);
    assert.ok(t, `terminal/output of unknown ${params.terminalId}`);
    return { output: t.output, truncated: false, ...(t.exit ? { exitStatus: t.exit } : {}) };
  })
  .onRequest(acp.methods.client.terminal.waitForExit, async ({ params }) => {
    const t = terminals.get(params.terminalId);
    assert.ok(t, `terminal/wait_for_exit of unknown ${params.terminalId}`);
    return t.exit ?? (await new Promise((res) => t.waiters.push(res)));
  })
  .onRequest(acp.methods.client.terminal.kill, ({ params }) => {
    terminals.get(params.terminalId)?.child.kill("SIGTERM");
    return {};
  })
  .onRequest(acp.methods.client.terminal.release, ({ params }) => {
    const t = terminals.get(params.terminalId);
    assert.ok(t, `terminal/release of unknown ${params.terminalId}`);
    if (!t.exit) t.child.kill("SIGTERM");
    released++;
    return {};
  });
const { agent } = app.connect(stream);

await agent.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: { terminal: true } });
const { sessionId } = await agent.request(acp.methods.agent.session.new, { cwd: root, mcpServers: [] });
const prompt = (text) => agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] });

// Rejected by the user: nothing reaches the editor's terminal.
let r = await prompt("delete keep.txt");
assert.equal(r.stopReason, "end_turn");
assert.equal(created.length, 0, "a rejected command reached terminal/create");

// Approved: it runs in a terminal of the editor, shown on its card.
updates.length = 0;
r = await prompt("list the project");
assert.equal(r.stopReason, "end_turn");
assert.equal(created.length, 1, "terminal/create for the command");
assert.equal(created[0].command, odin, "the terminal runs odin's own binary");
assert.equal(created[0].args[0], "__odin_sandbox_exec");
const call = updates.find((u) => u.sessionUpdate === "tool_call" && u.kind === "execute");
assert.ok(call, "the command's tool_call");
const shows = (u) => u.toolCallId === call.toolCallId && (u.content ?? []).some((c) => c.type === "terminal" && c.terminalId === "term-1");
const live = updates.findIndex((u) => u.sessionUpdate === "tool_call_update" && shows(u) && !u.status);
const final = updates.findIndex((u) => u.sessionUpdate === "tool_call_update" && u.toolCallId === call.toolCallId && u.status === "completed");
assert.ok(live >= 0, "an update embeds the terminal in the card while it runs");
assert.ok(final > live && shows(updates[final]), "the final update keeps the terminal");
assert.match(terminals.get("term-1").output, /visible-output/);

// The attack runs in a terminal too; the Go test grades its side effects.
r = await prompt("try to escape");
assert.equal(r.stopReason, "end_turn");
assert.equal(created.length, 2);
assert.equal(released, 2, "every terminal released");

const exited = new Promise((res) => child.on("exit", (code) => res(code)));
child.stdin.end();
assert.equal(await exited, 0, "odin acp exit code");
writeFileSync(outFile, [...terminals.values()].map((t) => t.output).join("\n----\n"));
console.log("ok");
