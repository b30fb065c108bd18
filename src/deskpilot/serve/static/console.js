// deskpilot console: sessions, chips, confirmations, the audit log.
// Every text that came from a screen, a model or a tool is set with textContent, never as HTML.
"use strict";

const state = {
  sessions: new Map(),   // id -> card
  chips: new Map(),      // id -> [items]
  view: null,            // {name, id}
  connected: false,
  config: {},
};
window.deskpilot = state;  // for tests and the benchmark: read-only inspection

const $ = (id) => document.getElementById(id);
const now = () => performance.timeOrigin + performance.now();

function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

async function post(url, body) {
  const r = await fetch(url, {
    method: "POST",
    headers: {"content-type": "application/json"},
    body: JSON.stringify(body || {}),
  });
  let data = {};
  try { data = await r.json(); } catch (e) { data = {}; }
  return {ok: r.ok, status: r.status, data};
}

// -- routing -----------------------------------------------------------------------------

function route() {
  const path = location.pathname;
  let m;
  if ((m = path.match(/^\/s\/([^/]+)$/))) return {name: "session", id: decodeURIComponent(m[1])};
  if ((m = path.match(/^\/audit\/([^/]+)$/))) return {name: "run", id: decodeURIComponent(m[1])};
  if (path === "/audit") return {name: "audit"};
  return {name: "list"};
}

function go(url) {
  history.pushState(null, "", url);
  show();
}

function show() {
  state.view = route();
  for (const name of ["list", "session", "audit", "run"]) {
    $("view-" + name).hidden = state.view.name !== name;
  }
  if (state.view.name === "list") renderCards();
  if (state.view.name === "session") renderSession(true);
  if (state.view.name === "audit") loadAudit();
  if (state.view.name === "run") loadRun(state.view.id);
  if (window.deskpilotFrames) {
    const v = state.view;
    window.deskpilotFrames.watch(v.name === "session" ? v.id : null, v.name === "list");
  }
}

document.addEventListener("click", (ev) => {
  const a = ev.target.closest("a[data-nav]");
  if (a && a.getAttribute("href") && !ev.ctrlKey && !ev.metaKey) {
    ev.preventDefault();
    go(a.getAttribute("href"));
  }
});
window.addEventListener("popstate", show);

// -- the event stream --------------------------------------------------------------------

function connect() {
  const source = new EventSource("/api/events");
  source.onopen = () => { state.connected = true; $("conn").textContent = "live"; $("conn").className = "conn live"; };
  source.onerror = () => { state.connected = false; $("conn").textContent = "reconnecting…"; $("conn").className = "conn"; };
  source.onmessage = (msg) => {
    const item = JSON.parse(msg.data);
    if (item.kind === "session") onCard(item.data);
    else if (item.kind === "event") onEvent(item.session, item.seq, item.data);
  };
}

function onCard(card) {
  const known = state.sessions.get(card.id);
  state.sessions.set(card.id, card);
  if (!state.chips.has(card.id)) state.chips.set(card.id, []);
  if (state.view.name === "list") renderCard(card, !known);
  if (state.view.name === "session" && state.view.id === card.id) renderSession(false);
}

function onEvent(sessionId, seq, item) {
  const list = state.chips.get(sessionId) || [];
  if (list.length && list[list.length - 1].seq >= seq) return;  // replayed twice: once is enough
  item.seq = seq;
  item.shownAt = now();
  list.push(item);
  state.chips.set(sessionId, list);
  if (state.view.name === "session" && state.view.id === sessionId) addChip(item);
}

// -- the list of sessions ------------------------------------------------------------------

function renderCards() {
  const box = $("cards");
  box.replaceChildren();
  const cards = [...state.sessions.values()].sort((a, b) => b.created - a.created);
  for (const card of cards) renderCard(card, true);
  $("no-sessions").hidden = cards.length > 0;
  $("mcp-url").textContent = state.config.mcp ? `${location.origin}/mcp` : "(MCP is off)";
}

function renderCard(card, fresh) {
  const box = $("cards");
  let node = box.querySelector(`[data-session="${CSS.escape(card.id)}"]`);
  if (!node) {
    node = el("article", "card");
    node.dataset.session = card.id;
    const thumb = el("canvas", "thumb");
    thumb.width = 320; thumb.height = 200;
    thumb.dataset.thumb = card.id;
    const link = el("a", "goal");
    link.href = `/s/${encodeURIComponent(card.id)}`;
    link.dataset.nav = "";
    const stop = el("button", "stop", "Stop");
    stop.type = "button";
    stop.addEventListener("click", () => stopSession(card.id));
    node.append(thumb, link, el("div", "state"), el("div", "status"), el("div", "meta muted"), el("div", "badge"), stop);
    box.prepend(node);
    $("no-sessions").hidden = true;
  }
  node.dataset.state = card.state;
  const goal = node.querySelector(".goal");
  goal.textContent = card.goal;
  goal.title = card.goal;
  node.querySelector(".state").textContent = card.label;
  node.querySelector(".status").textContent = card.status;
  node.querySelector(".meta").textContent = meta(card);
  const badge = node.querySelector(".badge");
  badge.textContent = card.pending.length ? `${card.pending.length} waiting for your approval` : "";
  badge.hidden = !card.pending.length;
  node.querySelector(".stop").hidden = !canStop(card);
}

function canStop(card) {
  return !["done", "needs_attention", "stopped", "stopping"].includes(card.state);
}

function meta(card) {
  const parts = [];
  parts.push(card.kind === "mcp" ? "MCP client" : card.target === "sandbox" ? "sandbox" : "this desktop");
  if (card.app) parts.push(card.title ? `${card.app}: ${card.title}` : card.app);
  if (card.model && card.kind === "task") parts.push(card.model);
  parts.push(`${card.steps} step${card.steps === 1 ? "" : "s"}`);
  return parts.join(" · ");
}

async function stopSession(id) {
  const r = await post(`/api/sessions/${encodeURIComponent(id)}/stop`);
  if (!r.ok) alert(r.data.error || `Stop failed (${r.status})`);
}

// -- new session form ----------------------------------------------------------------------

async function loadConfig() {
  const r = await fetch("/api/config");
  state.config = await r.json();
  const form = $("new-session");
  form.elements.model.value = state.config.model || "";
  form.elements.confirm.value = state.config.confirm || "consequential";
  form.elements.cleanup.checked = !!state.config.cleanup;
}

$("new-session").elements.cleanup.addEventListener("change", async (ev) => {
  const r = await post("/api/settings", {cleanup: ev.target.checked});
  if (!r.ok) $("form-error").textContent = r.data.error || `refused (${r.status})`;
});

async function loadWindows() {
  const select = $("new-session").elements.window;
  select.replaceChildren(el("option", null, "(none: the model picks)"));
  select.firstChild.value = "";
  const r = await fetch("/api/windows");
  if (!r.ok) return;
  for (const w of await r.json()) {
    const option = el("option", null, w.blocked ? `${w.app} (blocked)` : `${w.app}: ${w.title}`);
    option.value = w.stable_window_id;
    option.disabled = !!w.blocked;
    select.append(option);
  }
}

$("new-session").elements.target.addEventListener("change", (ev) => {
  const here = ev.target.value === "desktop";
  $("window-field").hidden = !here;
  if (here) loadWindows();
});

$("new-session").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const f = ev.target.elements;
  const body = {goal: f.goal.value, model: f.model.value, confirm: f.confirm.value, target: f.target.value};
  if (f.target.value === "desktop" && f.window.value) body.window = f.window.value;
  const r = await post("/api/sessions", body);
  $("form-error").textContent = r.ok ? "" : (r.data.error || `refused (${r.status})`);
  if (r.ok) { f.goal.value = ""; onCard(r.data); }
});

// -- one session ---------------------------------------------------------------------------

function renderSession(fresh) {
  const id = state.view.id;
  const card = state.sessions.get(id);
  if (!card) { $("s-goal").textContent = "No such session (yet)"; return; }
  $("s-goal").textContent = card.goal;
  $("s-state").textContent = card.label;
  $("s-state").dataset.state = card.state;
  $("s-status").textContent = card.status;
  $("s-meta").textContent = meta(card);
  $("s-stop").hidden = !canStop(card);
  $("s-stop").onclick = () => stopSession(id);
  const run = $("s-run");
  run.hidden = !card.run_id;
  if (card.run_id) run.href = `/audit/${encodeURIComponent(card.run_id)}`;
  const done = ["done", "needs_attention", "stopped"].includes(card.state);
  $("s-answer-box").hidden = !(done && card.answer);
  $("s-answer").textContent = card.answer || "";
  renderPending(card);
  if (fresh) {
    const canvas = $("preview");
    canvas.getContext("2d").clearRect(0, 0, canvas.width, canvas.height);
    delete canvas.dataset.seq;
    $("preview-note").hidden = false;
    $("chips").replaceChildren();
    for (const item of state.chips.get(id) || []) addChip(item);
  }
}

function renderPending(card) {
  const box = $("pending");
  const open = new Set(card.pending.map((p) => p.call_id));
  for (const node of [...box.children]) {
    if (!open.has(node.dataset.call)) node.remove();
  }
  for (const p of card.pending) {
    if (box.querySelector(`[data-call="${CSS.escape(p.call_id)}"]`)) continue;
    const node = el("div", "confirm");
    node.dataset.call = p.call_id;
    node.dataset.shownAt = String(now());
    node.dataset.asked = String(p.asked);
    const title = el("h3", null, `Allow ${p.tool}?`);
    const why = el("p", "reason", `${p.risk}: ${p.reason}`);
    const args = el("pre", "args", p.args_json);
    const details = el("p", "muted", (p.details || []).join("\n"));
    const yes = el("button", "approve", "Approve");
    const no = el("button", "deny", "Deny");
    yes.type = no.type = "button";
    const left = el("span", "muted countdown");
    const answer = async (approved) => {
      yes.disabled = no.disabled = true;
      const r = await post(`/api/sessions/${encodeURIComponent(card.id)}/confirmations/${encodeURIComponent(p.call_id)}`, {approved});
      if (!r.ok) left.textContent = r.data.error || `refused (${r.status})`;
    };
    yes.addEventListener("click", () => answer(true));
    no.addEventListener("click", () => answer(false));
    const tick = () => {
      const s = Math.max(0, Math.round(p.deadline - Date.now() / 1000));
      left.textContent = `declined in ${s} s without an answer`;
      if (node.isConnected && s > 0) setTimeout(tick, 1000);
    };
    tick();
    node.append(title, why, args, details, yes, no, left);
    box.append(node);
  }
}

const CHIP_KINDS = new Set(["tool.call", "tool.result", "confirm.asked", "confirm.answered", "model.text", "run.finished", "computer.call", "policy.decided", "policy.grants"]);

function addChip(item) {
  if (!CHIP_KINDS.has(item.event)) return;
  const list = $("chips");
  const d = item.data || {};
  if (item.event === "tool.result" && d.call_id) {
    const chip = list.querySelector(`li[data-call="${CSS.escape(d.call_id)}"][data-event="tool.call"]`);
    if (chip) {
      chip.dataset.ok = d.ok ? "yes" : "no";
      chip.dataset.resultShownAt = String(now());
      chip.querySelector(".result").textContent = (d.ok ? "✓ " : "✗ ") + (d.summary || "");
      const more = chip.querySelector(".more");
      more.textContent = d.text || "";
      more.hidden = !d.text;
      return;
    }
  }
  const chip = el("li", "chip");
  chip.dataset.event = item.event;
  chip.dataset.seq = String(item.seq);
  chip.dataset.ts = String(item.ts);
  chip.dataset.shownAt = String(item.shownAt || now());
  if (d.call_id) chip.dataset.call = d.call_id;
  if (item.event === "tool.call" || item.event === "computer.call") {
    chip.append(el("span", "tool", d.tool || "computer"), el("span", "args", d.args_json || ""), el("span", "result", "…"));
    const more = el("pre", "more");
    more.hidden = true;
    chip.append(more);
    chip.addEventListener("click", () => chip.classList.toggle("open"));
  } else if (item.event === "confirm.asked") {
    chip.append(el("span", "tool", `asks: ${d.tool}`), el("span", "args", d.reason || ""));
  } else if (item.event === "confirm.answered") {
    chip.append(el("span", "tool", d.approved ? `approved: ${d.tool}` : `declined: ${d.tool}`));
    chip.dataset.ok = d.approved ? "yes" : "no";
  } else if (item.event === "model.text") {
    chip.className = "chip note";
    chip.append(el("span", "text", d.text || ""));
  } else if (item.event === "policy.decided" || item.event === "policy.grants") {  // asks.js: words
    chip.append(el("span", "tool", d.outcome || "grants"), el("span", "args", d.sentence || (window.deskpilotAsks ? window.deskpilotAsks.said(item) : "")));
  } else if (item.event === "run.finished") {
    chip.append(el("span", "tool", `finished: ${d.outcome}`), el("span", "args", d.reason || ""));
  } else {
    chip.append(el("span", "tool", item.event), el("span", "args", d.tool || ""));
  }
  list.append(chip);
}

// -- the audit log -------------------------------------------------------------------------

async function loadAudit() {
  const [runs, verify] = await Promise.all([fetch("/api/runs").then((r) => r.json()), fetch("/api/audit/verify").then((r) => r.json())]);
  $("verify").textContent = verify.ok
    ? `verified: ${verify.events} events in ${verify.runs} runs, chain intact (head #${verify.head.seq} ${verify.head.hash.slice(0, 16)})`
    : `BROKEN: ${verify.problems.join("; ")}`;
  $("verify").className = verify.ok ? "ok" : "error";
  const body = $("runs").querySelector("tbody");
  body.replaceChildren();
  for (const run of runs) {
    const row = el("tr");
    const link = el("a", null, run.goal || run.id);
    link.href = `/audit/${encodeURIComponent(run.id)}`;
    link.dataset.nav = "";
    const goal = el("td");
    goal.append(link);
    row.append(el("td", null, new Date(run.started * 1000).toLocaleString()), goal, el("td", null, run.model), el("td", null, run.outcome || "(open)"), el("td", null, run.steps ?? ""));
    body.append(row);
  }
}

async function loadRun(id) {
  const r = await fetch(`/api/runs/${encodeURIComponent(id)}`);
  const steps = $("r-steps");
  steps.replaceChildren();
  if (!r.ok) { $("r-goal").textContent = "No such run"; return; }
  const run = await r.json();
  const start = run.events.find((e) => e.event === "run.started");
  const end = [...run.events].reverse().find((e) => e.event === "run.finished");
  $("r-goal").textContent = start ? start.data.goal : run.id;
  $("r-meta").textContent = `${run.id} · ${start ? start.data.model : ""} · ${end ? end.data.outcome : "not finished"}`;
  $("r-export").href = `/api/runs/${encodeURIComponent(run.id)}/export.md`;
  const calls = new Map();
  for (const e of run.events) {
    const d = e.data || {};
    if (e.event === "tool.call") {
      const li = el("li", "step");
      li.append(el("div", "tool", `${d.tool} ${d.args_json || ""}`), el("div", "result muted"));
      calls.set(d.call_id, li);
      steps.append(li);
    } else if (e.event === "tool.result" && calls.has(d.call_id)) {
      const li = calls.get(d.call_id);
      li.querySelector(".result").textContent = (d.ok ? "✓ " : "✗ ") + (d.summary || "");
      if (d.text) li.append(el("pre", "more", d.text));
      for (const image of e.images || []) {
        const img = el("img", "shot");
        img.src = image.url;
        img.alt = `screenshot after ${d.tool}`;
        li.append(img);
      }
    } else if (e.event === "tool.frame" && calls.has(d.call_id)) {
      const li = calls.get(d.call_id);
      for (const image of e.images || []) {
        const img = el("img", "shot frame");
        img.src = image.url;
        img.alt = d.blocked ? `after ${d.tool}: a blocked app's window (blacked out)` : `the window after ${d.tool}`;
        li.append(img);
      }
      if (d.missing) li.append(el("div", "muted frame-missing", `no frame: ${d.missing}`));
    } else if (e.event === "confirm.answered" && calls.has(d.call_id)) {
      calls.get(d.call_id).append(el("div", d.approved ? "ok" : "error", d.approved ? "approved" : "declined"));
    } else if (e.event === "run.finished") {
      const li = el("li", "step final");
      li.append(el("div", "tool", `finished: ${d.outcome}`), el("pre", "answer", d.answer || ""));
      steps.append(li);
    }
  }
}

// -- start ---------------------------------------------------------------------------------

(async () => {
  state.view = route();
  await loadConfig();
  connect();
  show();
})();
