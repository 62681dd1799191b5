// Odin viewer: reads odin serve's API only. Every text shown comes from a
// session (model output, tool output, file contents) and is untrusted, so
// the page builds DOM nodes and never assigns HTML.
import { diffLines, highlight } from "./diff.js";
import { lineText, money, plural, relPath } from "./format.js";

const state = { scale: "steps", token: "", session: "", timeline: null, live: false, liveRuns: new Map(), gateEvents: [], queued: [], abort: null, refreshTimer: 0, scrub: 1000 };

// The token arrives in the fragment (never sent to a server); keep it for
// this tab only and drop it from the address bar and history.
function takeToken() {
  const params = new URLSearchParams(location.hash.slice(1));
  const t = params.get("token");
  if (t) {
    sessionStorage.setItem("odin-token", t);
    params.delete("token");
    history.replaceState(null, "", location.pathname + (params.toString() ? "#" + params.toString() : ""));
  }
  state.token = sessionStorage.getItem("odin-token") || "";
}

function h(tag, attrs, ...kids) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k === "class") el.className = v;
    // Through the CSSOM: the Content Security Policy refuses style attributes.
    else if (k === "style") for (const d of v.split(";")) { const i = d.indexOf(":"); if (i > 0) el.style.setProperty(d.slice(0, i).trim(), d.slice(i + 1).trim()); }
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  for (const kid of kids.flat()) if (kid !== undefined && kid !== null && kid !== false) el.append(kid instanceof Node ? kid : String(kid));
  return el;
}
const $ = (id) => document.getElementById(id);

async function api(path, opts = {}) {
  const res = await fetch(path, { ...opts, headers: { Authorization: "Bearer " + state.token, ...(opts.headers || {}) } });
  if (!res.ok) {
    let msg = res.status + " " + res.statusText;
    try { msg = (await res.json()).error || msg; } catch { /* not JSON */ }
    const err = new Error(msg);
    err.status = res.status;
    throw err;
  }
  return res.status === 204 ? null : res.json();
}

function status(text) { $("status").textContent = text; }
const when = (t) => (t ? new Date(t).toLocaleString() : "");
const secs = (ns) => (ns / 1e9).toFixed(2) + "s";

// ---- sessions list ----
async function loadSessions() {
  const q = $("search").value.trim();
  try {
    const list = await api("/v1/history?limit=100" + (q ? "&q=" + encodeURIComponent(q) : ""));
    const body = $("sessions").tBodies[0];
    body.replaceChildren(...list.map((s) => h("tr", { class: s.id === state.session ? "current" : "", "data-id": s.id },
      h("td", {}, h("a", { href: "#session=" + encodeURIComponent(s.id), title: s.project }, s.title || s.id), h("br"), h("small", {}, s.project)),
      h("td", {}, s.status), h("td", {}, s.turns), h("td", {}, s.cost_text), h("td", {}, when(s.last_activity)))));
    if (!list.length) body.append(h("tr", {}, h("td", { colspan: 5 }, q ? "No session matches." : "No stored session yet.")));
  } catch (e) {
    status(e.status === 401 ? "The token is missing or wrong: open the URL odin view printed." : "Sessions: " + e.message);
  }
}

// ---- one session ----
async function openSession(id) {
  if (state.abort) state.abort.abort();
  Object.assign(state, { session: id, timeline: null, live: false, liveRuns: new Map(), gateEvents: [], queued: [], abort: null });
  $("event-log").replaceChildren();
  $("transcript").hidden = true;
  $("empty").hidden = true;
  $("session").hidden = false;
  try {
    await api("/v1/sessions/" + encodeURIComponent(id));
    state.live = true;
  } catch { state.live = false; }
  $("live-badge").hidden = !state.live;
  await refresh();
  if (state.live) { follow(id); refreshLive(); }
}

async function refresh() {
  const id = state.session;
  try {
    const tl = await api("/v1/history/" + encodeURIComponent(id));
    if (id !== state.session) return;
    state.timeline = tl;
  } catch (e) {
    if (!state.live) { status("Timeline: " + e.message); return; }
    // A live session not yet written to the store (or a server that keeps
    // no history): draw what its events said.
    state.timeline = { session: { id, title: "(starting)", project: "" }, turns: [], runs: [], tools: [], gates: [], usage: [], start: new Date().toISOString(), end: new Date().toISOString() };
  }
  render();
}

function scheduleRefresh() {
  clearTimeout(state.refreshTimer);
  state.refreshTimer = setTimeout(() => { refresh(); refreshLive(); loadSessions(); }, 150);
}

function render() {
  const tl = state.timeline;
  $("session-h").textContent = tl.session.title || tl.session.id;
  $("session-meta").textContent = `${tl.session.project} · ${tl.session.status || ""} · ${plural(tl.session.turns || 0, "turn")} · ${plural(tl.runs.length, "specialist run")} · ${tl.session.cost_text ?? ""} · ${tl.session.model || ""}`;
  renderTimeline(tl);
  renderGates(tl);
  renderCost(tl);
  for (const tr of $("sessions").tBodies[0].rows) tr.classList.toggle("current", tr.dataset.id === state.session);
}

function runsWithLive(tl) {
  const runs = tl.runs.map((r) => ({ ...r }));
  for (const r of runs) {
    const lr = state.liveRuns.get(r.id);
    if (lr && !lr.done) { r.outcome = "running"; r.end = new Date().toISOString(); }
  }
  for (const [id, lr] of state.liveRuns) {
    if (!runs.some((r) => r.id === id)) runs.push({ id, agent: lr.agent, title: lr.title, start: lr.start, end: lr.done ? lr.end : new Date().toISOString(), outcome: lr.done ? lr.outcome : "running", gate: "", round: 0, pending: true });
  }
  return runs;
}

function renderTimeline(tl) {
  const runs = runsWithLive(tl);
  const times = [tl.start, tl.end, ...runs.flatMap((r) => [r.start, r.end]), ...tl.turns.flatMap((t) => [t.start, t.end]), ...tl.gates.map((g) => g.at)]
    .map((t) => Date.parse(t)).filter((t) => !isNaN(t) && t > 0);
  const t0 = Math.min(...times), t1 = Math.max(...times, t0 + 1);
  // Two scales: wall-clock time, or steps, where every start and end gets
  // an equal share of the width so that a long wait (QA compiling) does
  // not squeeze the runs around it to slivers.
  const steps = [...new Set(times)].sort((a, b) => a - b);
  const frac = state.scale === "time" || steps.length < 2 ? (ms) => (ms - t0) / (t1 - t0) : (ms) => {
    let i = 0;
    while (i < steps.length - 2 && steps[i + 1] <= ms) i++;
    const a = steps[i], b = steps[i + 1];
    return (i + Math.min(Math.max((ms - a) / (b - a || 1), 0), 1)) / (steps.length - 1);
  };
  const pos = (t) => frac(Date.parse(t)) * 100;
  const cutPos = state.scrub / 10;
  const cut = state.scrub >= 1000 ? t1 : steps.find((ms) => frac(ms) * 100 > cutPos) ?? t1;
  $("scrub-time").textContent = state.scrub >= 1000 ? "end" : "+" + ((cut - t0) / 1000).toFixed(1) + "s";
  const future = (t) => pos(t) > cutPos + 1e-9;
  // A label near the right edge hangs to the left of its time.
  const anchor = (t) => (pos(t) > 60 ? `right:${Math.max(100 - pos(t), 0)}%` : `left:${pos(t)}%`);
  const bar = (cls, start, end, label, title, onclick, extra = {}) => h("button", {
    class: `bar ${cls}${future(start) ? " future" : ""}`, style: `left:${pos(start)}%;width:${Math.max(pos(end) - pos(start), 0.6)}%`,
    title, "aria-label": title, onclick, ...extra }, label);
  const lane = (name, kind, ...items) => h("div", { class: "lane", role: "listitem", "data-lane": kind },
    h("div", { class: "lane-name", title: name }, name), h("div", { class: "track" }, ...items, h("div", { class: "cursor", style: `left:${state.scrub / 10}%` })));

  // Inputs that waited in the queue (seen live) are marked where they
  // arrived.
  const queued = state.queued.map((q) => h("span", { class: `mark queued${future(q.time) ? " future" : ""}`, style: anchor(q.time), title: q.body }, `queued: ${q.body.slice(0, 30)}`));
  const lanes = [lane("Orchestrator", "orchestrator", ...tl.turns.map((t) => bar("ok", t.start, t.end, `turn ${t.index}`,
    `Orchestrator turn ${t.index}: ${t.input.slice(0, 120)}`, () => openTranscript(tl.session.id, "Orchestrator"))), ...queued) ];
  runs.forEach((r, i) => {
    const gate = r.gate_label || "";
    const name = `${r.agent} #${i + 1}${gate ? " · " + gate : ""}`;
    const label = `${r.agent}: ${r.title}`;
    const items = [bar(r.outcome, r.start, r.end, label, `${name}: ${r.title} (${r.outcome})${r.summary ? " — " + r.summary : ""}`,
      () => openTranscript(r.id, `${r.agent} #${i + 1}: ${r.title}`), { "data-run": r.id, "data-outcome": r.outcome, "data-gate": r.gate || "" })];
    if (r.gate === "fix") {
      const where = pos(r.start) > 12 ? `right:${100 - pos(r.start) + 0.5}%` : `left:${Math.min(pos(r.end) + 0.5, 90)}%`;
      items.push(h("span", { class: `mark fixmark${future(r.start) ? " future" : ""}`, style: where }, r.gate_label));
    }
    lanes.push(lane(name, "run", ...items));
  });
  // The QA checks Odin runs itself (their exit codes are the verdict). The
  // event stream times them exactly; a stored session places a round
  // between the run before it and what followed: the diagnosis of a
  // failure, or the gates' outcome.
  const qaMarks = [];
  const liveQA = new Map();
  for (const e of state.gateEvents.filter((e) => e.stage === "qa")) {
    const k = e.round + 1, cur = liveQA.get(k) || {};
    cur.label = lineText(e.line).split(" — ")[0];
    if (!e.done) cur.start = e.time; else if (!cur.end) { cur.end = e.time; cur.mark = e.passed ? "passed" : "failed"; cur.summary = e.summary; }
    liveQA.set(k, cur);
  }
  for (const g of tl.gates) {
    for (const s of g.stages.filter((s) => s.stage === "qa")) {
      const diag = runs.find((r) => r.gate === "qa" && r.round === s.round - 1);
      const end = s.mark === "failed" && diag ? diag.start : g.at;
      const before = runs.filter((r) => r.turn === g.turn && Date.parse(r.end) <= Date.parse(end)).map((r) => r.end).sort().pop() || end;
      liveQA.set(s.round, { ...(liveQA.get(s.round) || {}), start: (liveQA.get(s.round) || {}).start || before, end, mark: s.mark, summary: s.summary, label: s.label });
    }
  }
  for (const [round, q] of [...liveQA].sort((a, b) => a[0] - b[0])) {
    if (!q.start) continue;
    const cls = q.mark === "passed" ? "ok" : q.mark === "failed" ? "failed" : "running";
    qaMarks.push(bar(cls, q.start, q.end || new Date().toISOString(), q.label, `QA checks, ${q.label}${q.summary ? " — " + q.summary : ""}`,
      () => { const d = runs.find((r) => r.gate === "qa" && r.round === round - 1); if (d) openTranscript(d.id, `qa: ${d.title}`); }, { "data-qa": q.mark || "running" }));
  }
  lanes.push(lane("QA checks", "qa", ...qaMarks));
  lanes.push(lane("Gates", "gates", ...tl.gates.map((g) => h("span", { class: `mark ${g.passed ? "passed" : "failed"}${future(g.at) ? " future" : ""}`, style: anchor(g.at) },
    `turn ${g.turn}: gates ${g.verdict}`))));
  $("timeline").replaceChildren(...lanes);
}

function renderGates(tl) {
  const out = [];
  const decided = state.gateEvents.filter((e) => e.type === "gate_decided");
  for (const d of decided) {
    out.push(h("div", { class: "gate" }, h("strong", {}, "Required: "), [d.decision.review_required && "review", d.decision.qa_required && "QA"].filter(Boolean).join(" and ") || "optional",
      h("ul", {}, (d.decision.reasons || []).map((r) => h("li", {}, r)))));
  }
  for (const g of tl.gates) {
    const rounds = tl.runs.filter((r) => r.turn === g.turn && r.gate);
    out.push(h("div", { class: "gate", "data-turn": g.turn },
      h("p", {}, h("span", { class: g.passed ? "verdict-passed" : "verdict-failed" }, `Verdict: ${g.verdict}`), ` (turn ${g.turn})`),
      (g.reasons || []).length ? h("div", { class: "gate-reasons" }, h("strong", {}, "Required because: "), h("ul", {}, g.reasons.map((r) => h("li", {}, r)))) : "",
      h("ol", {}, g.stages.map((s) => h("li", { class: "stage", "data-stage": s.stage, "data-mark": s.mark }, h("strong", {}, s.label), s.summary ? " — " + s.summary : ""))),
      rounds.map(gateRound)));
  }
  if (!decided.length && tl.gates.length && !tl.gates.some((g) => (g.reasons || []).length)) out.push(h("p", { class: "legend" }, "This session was stored before Odin kept why the gates were required; only their outcome is known."));
  if (!out.length) out.push(h("p", {}, "No gate ran."));
  $("gates").replaceChildren(...out);
}

function gateRound(r) {
  const rep = r.report || {};
  const kids = [h("strong", {}, r.gate_label), `: ${r.summary || r.title}`];
  if (Array.isArray(rep.issues) && rep.issues.length) {
    const bySev = {};
    for (const i of rep.issues) (bySev[i.severity] ||= []).push(i);
    for (const sev of ["critical", "major", "minor", "nitpick", ...Object.keys(bySev)].filter((s, i, a) => bySev[s] && a.indexOf(s) === i)) {
      kids.push(h("div", { class: `sev-${sev}` }, `${sev} (${bySev[sev].length})`), h("ul", {}, bySev[sev].map((i) => h("li", { class: "finding", "data-severity": sev }, `${i.file || ""}${i.line ? ":" + i.line : ""} ${i.message || ""}`))));
    }
  }
  if (Array.isArray(rep.blockers) && rep.blockers.length) kids.push(h("ul", {}, rep.blockers.map((b) => h("li", { class: "sev-major" }, b))));
  if (Array.isArray(rep.checks) && rep.checks.length) kids.push(h("ul", {}, rep.checks.map((c) => h("li", {}, `${c.name}: ${c.passed ? "passed" : "FAILED (exit " + c.exit_code + ")"}`, c.output ? h("pre", {}, c.output) : ""))));
  kids.push(" ", h("button", { class: "act", onclick: () => openTranscript(r.id, `${r.agent}: ${r.title}`) }, "Transcript"));
  return h("div", { class: "round", "data-gate": r.gate }, ...kids);
}

function chart(title, rows, fmt) {
  const max = Math.max(...rows.map((r) => r[1]), 1e-9), w = 300, rh = 18;
  const money = fmt;
  return h("figure", {}, h("figcaption", {}, title), (() => {
    const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
    svg.setAttribute("class", "chart"); svg.setAttribute("width", w + 150); svg.setAttribute("height", rows.length * rh + 4);
    svg.setAttribute("role", "img"); svg.setAttribute("aria-label", title + ": " + rows.map((r) => `${r[0]} ${money(r[1])}`).join(", "));
    rows.forEach(([k, v], i) => {
      const t = document.createElementNS(svg.namespaceURI, "text"); t.setAttribute("x", 0); t.setAttribute("y", i * rh + 13); t.textContent = k.slice(0, 18); svg.append(t);
      const r = document.createElementNS(svg.namespaceURI, "rect"); r.setAttribute("x", 120); r.setAttribute("y", i * rh + 3); r.setAttribute("height", rh - 6); r.setAttribute("width", Math.max(1, (v / max) * (w - 90))); svg.append(r);
      const l = document.createElementNS(svg.namespaceURI, "text"); l.setAttribute("x", 124 + Math.max(1, (v / max) * (w - 90))); l.setAttribute("y", i * rh + 13); l.textContent = money(v); svg.append(l);
    });
    return svg;
  })());
}

function renderCost(tl) {
  const priced = tl.usage.some((u) => u.cost > 0);
  const val = (u) => (priced ? u.cost : u.prompt_tokens + u.completion_tokens);
  const fmt = priced ? money : (v) => `${v} tok`;
  const sum = (key) => {
    const m = new Map();
    for (const u of tl.usage) m.set(key(u), (m.get(key(u)) || 0) + val(u));
    return [...m].sort((a, b) => b[1] - a[1]);
  };
  const turnOf = (u) => "turn " + (tl.turns.filter((t) => Date.parse(t.start) <= Date.parse(u.at)).length || 1);
  const tokens = tl.usage.reduce((a, u) => [a[0] + u.prompt_tokens, a[1] + u.completion_tokens, a[2] + u.cached_tokens], [0, 0, 0]);
  $("cost").replaceChildren(h("p", {}, `${plural(tl.usage.length, "model call")}: ${tokens[0]} prompt tokens (${tokens[2]} cached), ${tokens[1]} completion tokens, ${money(tl.usage.reduce((a, u) => a + u.cost, 0), (tl.unpriced_models || []).length > 0)}`),
    priced ? ((tl.unpriced_models || []).length ? h("p", { class: "legend" }, "No price is known for " + tl.unpriced_models.join(", ") + ": the charts count only priced calls.") : "") : h("p", { class: "legend" }, "No price is known for these models: the charts show tokens."),
    chart("per agent", sum((u) => u.agent || "?"), fmt), chart("per model", sum((u) => u.model || "?"), fmt), chart("per turn", sum(turnOf), fmt),
    ledgerTable(tl.usage, turnOf));
}

// ledgerTable shows where the prompt tokens went: one row per turn and
// agent, one column per part of the requests (system, tools, history,
// injected context, new input), each "tokens (cached)". Calls recorded
// without a ledger are left out.
const ledgerParts = ["system", "tools", "history", "context", "input"];
function ledgerTable(usage, turnOf) {
  const rows = new Map();
  for (const u of usage) {
    if (!u.parts || !u.parts.length) continue;
    const k = turnOf(u) + " · " + (u.agent || "?");
    const r = rows.get(k) || { calls: 0, parts: Object.fromEntries(ledgerParts.map((p) => [p, [0, 0]])) };
    r.calls++;
    for (const p of u.parts) {
      const c = r.parts[p.part] || (r.parts[p.part] = [0, 0]);
      c[0] += p.tokens; c[1] += p.cached || 0;
    }
    rows.set(k, r);
  }
  if (!rows.size) return "";
  const cell = ([t, c]) => h("td", {}, t ? `${t} (${c})` : "–");
  return h("div", { class: "chart" }, h("h3", {}, "prompt tokens by part: tokens (cached)"),
    h("table", { class: "ledger" },
      h("tr", {}, h("th", {}, "turn · agent"), h("th", {}, "calls"), ...ledgerParts.map((p) => h("th", {}, p))),
      ...[...rows].map(([k, r]) => h("tr", {}, h("td", {}, k), h("td", {}, String(r.calls)), ...ledgerParts.map((p) => cell(r.parts[p]))))));
}

// ---- transcript ----
async function openTranscript(id, label) {
  state.opener = document.activeElement;
  let tr;
  try { tr = await api("/v1/history/" + encodeURIComponent(id) + "/transcript"); } catch (e) { status("Transcript: " + e.message); return; }
  const body = [];
  const results = new Map();
  for (const e of tr.entries) for (const p of e.parts) if (p.type === "tool_result") results.set(p.id, p);
  const records = new Map(tr.tools.map((t) => [t.call_id, t]));
  let call = 0;
  let prev = null;
  for (const e of tr.entries) {
    if (e.role === "tool") { prev = e; continue; }
    const head = [`${e.role} #${e.seq}`, when(e.at)];
    if (e.role === "assistant") {
      const u = tr.usage[call++];
      if (u) head.push(`${u.model}: ${u.prompt_tokens} prompt tokens (${u.cached_tokens} cached), ${u.completion_tokens} completion, ${money(u.cost, (tr.unpriced_models || []).includes(u.model))}`);
      if (u && u.parts) head.push(u.parts.filter((p) => p.tokens).map((p) => `${p.part} ${p.tokens}${p.cached ? ` (${p.cached} cached)` : ""}`).join(", "));
      if (prev) head.push(`latency ≈ ${((Date.parse(e.at) - Date.parse(prev.at)) / 1000).toFixed(2)}s after the request`);
    }
    const parts = e.parts.map((p) => {
      switch (p.type) {
        case "text": return e.seq <= 1 && tr.session.parent_id ? h("details", { open: true }, h("summary", {}, "Brief"), h("pre", {}, p.text)) : h("pre", {}, p.text);
        case "reasoning": return h("details", {}, h("summary", {}, "Reasoning"), h("pre", {}, p.text));
        case "tool_call": return toolCall(p, results.get(p.id), records.get(p.id));
        default: return null;
      }
    });
    body.push(h("div", { class: `entry ${e.role}` }, h("div", { class: "entry-head" }, head.join(" · ")), parts));
    prev = e;
  }
  if (tr.report) body.push(h("section", { class: "report" }, h("h4", {}, "Report"), h("pre", {}, JSON.stringify(tr.report, null, 2))));
  $("transcript-h").textContent = `Transcript — ${label} (${tr.session.model || ""}, ${tr.cost_text})`;
  $("transcript-body").replaceChildren(...body);
  $("transcript").hidden = false;
  $("transcript-h").focus();
}

function toolCall(p, res, rec) {
  let input = {};
  try { input = JSON.parse(p.input || "{}"); } catch { /* shown raw */ }
  const kids = [h("summary", {}, `${p.name}`, rec ? ` · ${secs(rec.elapsed_ns)}` : "", res && res.is_error ? " · error" : "")];
  const diffs = diffsOf(p.name, input);
  if (diffs.length) kids.push(...diffs);
  else kids.push(h("div", {}, "Input"), h("pre", {}, JSON.stringify(input, null, 2)));
  if (res) kids.push(h("div", {}, "Output"), h("pre", { class: res.is_error ? "sev-major" : "" }, res.text));
  return h("details", { class: "tool-call", open: diffs.length > 0 || p.name === "Report" }, ...kids);
}

function diffsOf(name, input) {
  const abs = input.file_path || input.path || "";
  if (!abs) return [];
  // Named relative to the session's project, as every front end does.
  const file = relPath(state.timeline && state.timeline.session && state.timeline.session.project, abs);
  if (name === "WriteFile" && typeof input.content === "string") return [diffTable(file + " (written)", "", input.content, file)];
  if (typeof input.old_string === "string" && typeof input.new_string === "string") return [diffTable(file, input.old_string, input.new_string, file)];
  if (Array.isArray(input.edits)) return input.edits.map((e, i) => diffTable(`${file} (edit ${i + 1})`, e.old_string || "", e.new_string || "", file));
  return [];
}

// diffTable renders old and new text side by side, lines coloured by the
// file's language.
function diffTable(caption, a, b, file) {
  const rows = diffLines(a, b).map(([l, r]) => h("tr", {},
    h("td", { class: "n" }, l ? l.n : ""), h("td", { class: l && l.kind === "del" ? "del" : "" }, l ? highlight(l.text, file) : ""),
    h("td", { class: "n" }, r ? r.n : ""), h("td", { class: r && r.kind === "add" ? "add" : "" }, r ? highlight(r.text, file) : "")));
  return h("table", { class: "diff" }, h("caption", {}, caption), h("thead", {}, h("tr", {}, h("th", { class: "n", scope: "col" }, "#"), h("th", { scope: "col" }, "before"), h("th", { class: "n", scope: "col" }, "#"), h("th", { scope: "col" }, "after"))), h("tbody", {}, rows));
}

// ---- live ----
async function refreshLive() {
  if (!state.live) return;
  const id = encodeURIComponent(state.session);
  try {
    const [approvals, queue] = await Promise.all([api(`/v1/sessions/${id}/approvals`), api(`/v1/sessions/${id}/queue`)]);
    $("approvals").replaceChildren(...(approvals.length ? approvals.map((a) => h("div", { class: "gate approval" },
      h("p", {}, h("strong", {}, a.tool), ` (${a.agent || "orchestrator"}): `, h("code", {}, a.subject)), h("p", {}, a.reason),
      ["once", "session", "deny"].map((d) => h("button", { class: "act", "data-decision": d, onclick: () => answer(a.id, d) }, d === "once" ? "Allow once" : d === "session" ? "Allow for the session" : "Deny")))) : [h("p", {}, "None pending.")]));
    $("queue").replaceChildren(...[...(queue.running ? [queue.running] : []), ...(queue.queued || [])].map((m, i) => h("li", {}, (i === 0 && queue.running ? "running: " : "queued: ") + (m.body || m.Body || ""))));
  } catch (e) { status("Live: " + e.message); }
}

async function answer(approval, decision) {
  try {
    await api(`/v1/sessions/${encodeURIComponent(state.session)}/approvals/${encodeURIComponent(approval)}`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ decision }) });
    status(`Answered ${decision}.`);
  } catch (e) { status("Approval: " + e.message); }
  refreshLive();
}

// follow reads the session's SSE stream with fetch (EventSource cannot send
// the Authorization header), from the oldest event the server still holds.
async function follow(id) {
  const ctl = new AbortController();
  state.abort = ctl;
  let last = "0";
  while (!ctl.signal.aborted) {
    try {
      const res = await fetch(`/v1/sessions/${encodeURIComponent(id)}/events`, { headers: { Authorization: "Bearer " + state.token, "Last-Event-ID": last }, signal: ctl.signal });
      if (!res.ok) { status("Events: " + res.status); return; }
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      let buf = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += value;
        let i;
        while ((i = buf.indexOf("\n\n")) >= 0) {
          const block = buf.slice(0, i); buf = buf.slice(i + 2);
          let data = "", evid = "";
          for (const line of block.split("\n")) {
            if (line.startsWith("data: ")) data += line.slice(6);
            else if (line.startsWith("id: ")) evid = line.slice(4);
          }
          if (evid) last = evid;
          if (data) onEvent(JSON.parse(data));
        }
      }
    } catch (e) {
      if (ctl.signal.aborted) return;
    }
    if (state.session !== id) return;
    await new Promise((r) => setTimeout(r, 1000));
  }
}

const refreshOn = new Set(["agent_started", "agent_finished", "gate_decided", "gate_stage", "turn_started", "turn_finished", "approval_requested", "approval_resolved", "input_queued", "input_removed", "todos"]);
function onEvent(ev) {
  if (ev.type === "text_delta" || ev.type === "reasoning_delta") return;
  const log = $("event-log");
  // An event that prints a line in the terminal reads the same here.
  const what = ev.line ? lineText(ev.line) : `${ev.type}${ev.agent ? " " + ev.agent : ""}${ev.name ? " " + ev.name : ""}`;
  log.append(h("li", { "data-type": ev.type }, `${new Date(ev.time).toLocaleTimeString()} ${what}`));
  while (log.children.length > 200) log.firstChild.remove();
  $("live-badge").dataset.events = String(Number($("live-badge").dataset.events || 0) + 1);
  if (ev.type === "agent_started") state.liveRuns.set(ev.task_id, { agent: ev.agent, title: ev.description, start: ev.time, done: false });
  if (ev.type === "agent_finished") {
    const lr = state.liveRuns.get(ev.report.task_id) || { agent: ev.report.agent, title: "", start: ev.time };
    Object.assign(lr, { done: true, end: ev.time, outcome: ev.report.status === "ok" ? "ok" : "failed" });
    state.liveRuns.set(ev.report.task_id, lr);
  }
  if (ev.type === "gate_decided" || ev.type === "gate_stage") state.gateEvents.push(ev);
  if (ev.type === "input_queued") state.queued.push({ id: ev.input.id, body: ev.input.body, time: ev.time });
  if (ev.type === "shutdown" || ev.type === "closed") { state.live = false; $("live-badge").hidden = true; }
  if (refreshOn.has(ev.type)) scheduleRefresh();
}

// ---- routing ----
function route() {
  const params = new URLSearchParams(location.hash.slice(1));
  const id = params.get("session");
  if (id && id !== state.session) openSession(id);
}

function main() {
  takeToken();
  if (!state.token) status("No token: open the URL odin view printed (it carries the token after #).");
  let t = 0;
  $("search").addEventListener("input", () => { clearTimeout(t); t = setTimeout(loadSessions, 200); });
  $("scale").addEventListener("change", (e) => { state.scale = e.target.value; if (state.timeline) renderTimeline(state.timeline); });
  $("scrub").addEventListener("input", (e) => { state.scrub = Number(e.target.value); if (state.timeline) renderTimeline(state.timeline); });
  window.addEventListener("hashchange", route);
  // Escape closes a transcript and returns to the bar that opened it.
  document.addEventListener("keydown", (e) => {
    if (e.key !== "Escape" || $("transcript").hidden) return;
    $("transcript").hidden = true;
    if (state.opener && state.opener.isConnected) state.opener.focus();
  });
  loadSessions();
  route();
}
main();
