// Checks `odin acp` against issue 31's ACP defects with the ACP TypeScript
// SDK's client from npm (@agentclientprotocol/sdk): two queued prompts both
// answered in order (20 rounds); one id per tool call (announcement, permission,
// updates); a tool's fs requests after its tool_call and every update of a
// turn before its response, cancelled turns included (20 rounds); the mode
// and the model (a session config option) after session/load in a new
// process; the commands list. The order is
// read from the raw lines on the pipes, before the SDK handles them.
// Usage: node conformance.mjs ODIN ROOT. Prints "ok" or fails.
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import assert from "node:assert/strict";
import * as acp from "@agentclientprotocol/sdk";

const [odin, root] = process.argv.slice(2);
const ROUNDS = 20;

// start runs odin acp with a client that answers permissions "once" and
// serves fs requests from the disk; wire gets every message odin writes,
// sent maps the client's request ids to their methods.
function start() {
  const child = spawn(odin, ["acp"], { cwd: root, stdio: ["pipe", "pipe", "inherit"] });
  const wire = [];
  const sent = new Map();
  let rest = "";
  const out = new ReadableStream({
    start(controller) {
      child.stdout.on("data", (chunk) => {
        rest += chunk.toString("utf8");
        let i;
        while ((i = rest.indexOf("\n")) >= 0) {
          const line = rest.slice(0, i);
          rest = rest.slice(i + 1);
          if (line.trim()) wire.push(JSON.parse(line));
        }
        controller.enqueue(new Uint8Array(chunk));
      });
      child.stdout.on("end", () => controller.close());
    },
  });
  const stdin = Writable.toWeb(child.stdin).getWriter();
  const decoder = new TextDecoder();
  const inw = new WritableStream({
    async write(chunk) {
      for (const line of decoder.decode(chunk).split("\n")) {
        if (!line.trim()) continue;
        const m = JSON.parse(line);
        if (m.method && m.id !== undefined) sent.set(JSON.stringify(m.id), m.method);
      }
      await stdin.write(chunk);
    },
    close: () => stdin.close(),
  });
  const stream = acp.ndJsonStream(inw, out);
  const app = acp
    .client({ name: "odin-conformance" })
    .onNotification(acp.methods.client.session.update, () => {})
    .onRequest(acp.methods.client.session.requestPermission, () => ({ outcome: { outcome: "selected", optionId: "once" } }))
    .onRequest(acp.methods.client.fs.readTextFile, async ({ params }) => {
      const { readFile } = await import("node:fs/promises");
      return { content: await readFile(params.path, "utf8") };
    })
    .onRequest(acp.methods.client.fs.writeTextFile, async ({ params }) => {
      const { writeFile } = await import("node:fs/promises");
      await writeFile(params.path, params.content);
      return {};
    });
  const conn = app.connect(stream);
  const isResponse = (m, method) => m.method === undefined && m.id !== undefined && sent.get(JSON.stringify(m.id)) === method;
  return { child, agent: conn.agent, wire, isResponse };
}

async function stop(p) {
  const exited = new Promise((res) => p.child.on("exit", (code) => res(code)));
  p.child.stdin.end();
  assert.equal(await exited, 0, "odin acp exit code");
}

const updates = (msgs) => msgs.filter((m) => m.method === "session/update").map((m) => m.params.update);
const text = (us) => us.filter((u) => u.sessionUpdate === "agent_message_chunk").map((u) => u.content.text).join("");
const sleep = (ms) => new Promise((res) => setTimeout(res, ms));
async function waitFor(p, from, what, ok) {
  for (let i = 0; i < 600; i++) {
    const j = p.wire.findIndex((m, k) => k >= from && ok(m));
    if (j >= 0) return j;
    await sleep(50);
  }
  assert.fail(`waiting for ${what}`);
}

const p = start();
const init = await p.agent.request(acp.methods.agent.initialize, {
  protocolVersion: acp.PROTOCOL_VERSION,
  clientCapabilities: { fs: { readTextFile: true, writeTextFile: true } },
});
assert.ok(init.agentCapabilities.sessionCapabilities?.list, "session/list advertised");
const { sessionId } = await p.agent.request(acp.methods.agent.session.new, { cwd: root, mcpServers: [] });

// The commands list follows the session/new response.
const cmdsAt = await waitFor(p, 0, "available_commands_update", (m) => m.params?.update?.sessionUpdate === "available_commands_update");
assert.ok(p.wire.findIndex((m) => p.isResponse(m, "session/new")) < cmdsAt, "commands after the session/new response");
assert.deepEqual(p.wire[cmdsAt].params.update.availableCommands.map((c) => c.name), ["compact", "review"]);

// Two prompts on one session, 20 rounds: the second waits; both end their
// turn, in order, and nothing of the second turn precedes the first
// response (the second turn starts the moment the first ends).
const ask = (t) => p.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: t }] });
let from = p.wire.length;
const expected = [];
for (let i = 0; i < ROUNDS; i++) {
  const first = ask(`first question (${i})`);
  await sleep(200);
  const second = ask(`second question (${i})`);
  const [r1, r2] = await Promise.all([first, second]);
  assert.equal(r1.stopReason, "end_turn", `round ${i}: the first prompt was not cancelled by the second`);
  assert.equal(r2.stopReason, "end_turn");
  expected.push(`first answer (${i})`, `second answer (${i})`);
}
const said = [];
let acc = [];
for (const m of p.wire.slice(from)) {
  if (m.method === "session/update") acc.push(m.params.update);
  if (p.isResponse(m, "session/prompt")) {
    said.push(text(acc));
    acc = [];
  }
}
assert.deepEqual(said, expected);

// One id per tool call: the permission names the call its tool_call announced.
from = p.wire.length;
assert.equal((await ask("delete keep.txt")).stopReason, "end_turn");
const turn = p.wire.slice(from);
const perm = turn.findIndex((m) => m.method === "session/request_permission");
assert.ok(perm >= 0, "a permission was asked");
const announced = turn.findIndex((m) => m.params?.update?.sessionUpdate === "tool_call");
assert.ok(announced >= 0 && announced < perm, "the tool_call precedes its permission request");
const ids = new Set([
  ...updates(turn).filter((u) => u.toolCallId).map((u) => u.toolCallId),
  turn[perm].params.toolCall.toolCallId,
]);
assert.deepEqual([...ids], ["call_rm_ts"]);

// Order, 20 rounds: fs requests after their tool_call; every call finished
// before the response; a cancelled turn's final update before its response.
function checkTurn(msgs, what, calls) {
  const open = new Map();
  let announced = 0;
  for (const m of msgs) {
    if (p.isResponse(m, "session/prompt")) {
      assert.equal(announced, calls, `${what}: tool calls announced`);
      assert.deepEqual([...open.keys()], [], `${what}: calls without a final update before the response`);
      return;
    }
    const u = m.params?.update;
    if (m.method === "session/update" && u.toolCallId) {
      if (u.sessionUpdate === "tool_call") {
        announced++;
        open.set(u.toolCallId, u.locations?.[0]?.path);
      } else if (u.status === "completed" || u.status === "failed") open.delete(u.toolCallId);
    }
    if (m.method === "fs/read_text_file" || m.method === "fs/write_text_file") {
      assert.ok([...open.values()].includes(m.params.path), `${what}: ${m.method} ${m.params.path} before its tool_call`);
    }
  }
  assert.fail(`${what}: no response`);
}
for (let i = 0; i < ROUNDS; i++) {
  from = p.wire.length;
  assert.equal((await ask(`round ${i} files`)).stopReason, "end_turn");
  checkTurn(p.wire.slice(from), `round ${i}`, 2);
  from = p.wire.length;
  const slow = ask(`round ${i} slow`);
  await waitFor(p, from, "the command's tool_call", (m) => m.params?.update?.sessionUpdate === "tool_call" && m.params.update.kind === "execute");
  await p.agent.notify(acp.methods.agent.session.cancel, { sessionId });
  assert.equal((await slow).stopReason, "cancelled");
  checkTurn(p.wire.slice(from), `round ${i} cancelled`, 1);
}

// The mode, and the model chosen as a config option, survive
// session/load in a new process.
await p.agent.request(acp.methods.agent.session.setMode, { sessionId, modeId: "plan" });
const option = (opts, id) => opts.find((o) => o.id === id);
const set = await p.agent.request(acp.methods.agent.session.setConfigOption, { sessionId, configId: "model", value: "gpt-4o-mini" });
assert.equal(option(set.configOptions, "model").currentValue, "gpt-4o-mini");
assert.equal(option(set.configOptions, "mode").currentValue, "plan", "the mode config option follows session/set_mode");
await assert.rejects(p.agent.request(acp.methods.agent.session.setConfigOption, { sessionId, configId: "model", value: "no-such-model" }));
await assert.rejects(p.agent.request(acp.methods.agent.session.setConfigOption, { sessionId, configId: "colour", value: "blue" }));
await stop(p);
const p2 = start();
await p2.agent.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
const loaded = await p2.agent.request(acp.methods.agent.session.load, { sessionId, cwd: root, mcpServers: [] });
assert.equal(loaded.modes.currentModeId, "plan");
assert.equal(option(loaded.configOptions, "mode").currentValue, "plan");
assert.equal(option(loaded.configOptions, "model").currentValue, "gpt-4o-mini");
assert.match(text(updates(p2.wire)), /first answer.*second answer/s);
await stop(p2);
console.log("ok");
