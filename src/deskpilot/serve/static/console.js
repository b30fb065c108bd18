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

// The login ended (the server restarted, or the cookie was cleared): to the login page, which
// brings this page back afterwards.
function toLogin() {
  location.assign(`/login?why=expired&next=${encodeURIComponent(location.pathname)}`);
}

async function get(url) {
  const r = await fetch(url);
  if (r.status === 401) { toLogin(); throw new Error("not logged in"); }
  return r;
}

async function post(url, body) {
  const r = await fetch(url, {
    method: "POST",
    headers: {"content-type": "application/json"},
    body: JSON.stringify(body || {}),
  });
  if (r.status === 401) toLogin();
  let data = {};
  try { data = await r.json(); } catch (e) { data = {}; }
  return {ok: r.ok, status: r.status, data};
}

function money(cost) {
  if (cost === null || cost === undefined) return "";
  return "$" + (cost >= 1 ? cost.toFixed(2) : cost >= 0.01 ? cost.toFixed(3) : cost.toFixed(4));
}

function count(n) { return Number(n || 0).toLocaleString("en-US"); }

function usageText(tokens, cost, model) {
  const t = tokens || {};
  const parts = [`${count(t.input)} in`, `${count(t.output)} out`];
  if (t.cached) parts.push(`${count(t.cached)} cached`);
  parts.push(cost === null || cost === undefined ? "no price" + (model ? ` for ${model}` : "") : money(cost));
  return parts.join(" · ");
}

// -- routing -----------------------------------------------------------------------------

function route() {
  const path = location.pathname;
  let m;
  if ((m = path.match(/^\/s\/([^/]+)$/))) return {name: "session", id: decodeURIComponent(m[1])};
  if ((m = path.match(/^\/audit\/([^/]+)$/))) return {name: "run", id: decodeURIComponent(m[1])};
  if (path === "/audit") return {name: "audit"};
  if (path === "/prices") return {name: "prices"};
  return {name: "list"};
}

function go(url) {
  history.pushState(null, "", url);
  show();
}

function show() {
  state.view = route();
  for (const name of ["list", "session", "audit", "run", "prices"]) {
    $("view-" + name).hidden = state.view.name !== name;
  }
  if (state.view.name === "list") renderCards();
  if (state.view.name === "session") renderSession(true);
  if (state.view.name === "audit") loadAudit();
  if (state.view.name === "run") loadRun(state.view.id);
  document.dispatchEvent(new CustomEvent("deskpilot:view", {detail: state.view}));
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
  source.onerror = () => {
    state.connected = false; $("conn").textContent = "reconnecting…"; $("conn").className = "conn";
    if (source.readyState === EventSource.CLOSED) {  // refused, not cut: logged out?
      fetch("/api/config").then((r) => {
        if (r.status === 401) toLogin();
        else setTimeout(connect, 2000);
      }, () => setTimeout(connect, 2000));
    }
  };
  source.onmessage = (msg) => {
    const item = JSON.parse(msg.data);
    try {
      if (item.kind === "session") onCard(item.data);
      else if (item.kind === "event") onEvent(item.session, item.seq, item.data, item.at);
    } finally {
      // the page's other parts (asks.js) follow this stream too: one stream per page, each
      // item read once, and the chip is in the page before they see it
      document.dispatchEvent(new CustomEvent("deskpilot:item", {detail: item}));
    }
  };
}

function onCard(card) {
  const known = state.sessions.get(card.id);
  state.sessions.set(card.id, card);
  if (!state.chips.has(card.id)) state.chips.set(card.id, []);
  if (state.view.name === "list") renderCard(card, !known);
  if (state.view.name === "session" && state.view.id === card.id) renderSession(false);
  if (state.focusNew === card.id && state.view.name === "list") {  // the card just started
    state.focusNew = null;
    const link = $("cards").querySelector(`[data-session="${CSS.escape(card.id)}"] a.goal`);
    if (link) link.focus();
  }
}

function onEvent(sessionId, seq, item, at) {
  const list = state.chips.get(sessionId) || [];
  if (list.length && list[list.length - 1].seq >= seq) return;  // replayed twice: once is enough
  item.seq = seq;
  item.at = at;  // published by the server (item.ts: when it happened)
  item.shownAt = now();
  list.push(item);
  state.chips.set(sessionId, list);
  if (state.view.name === "session" && state.view.id === sessionId) addChip(item);
}

// -- the list of sessions ------------------------------------------------------------------

// Cards are kept from one drawing of the list to the next (re-ordered, never re-made): their
// thumbnails keep their pictures, finished sessions' too.
function renderCards() {
  const box = $("cards");
  const cards = [...state.sessions.values()].sort((a, b) => b.created - a.created);
  for (const card of cards) renderCard(card, false);
  for (const card of cards) box.append(box.querySelector(`[data-session="${CSS.escape(card.id)}"]`));
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
    thumb.setAttribute("role", "img");
    const link = el("a", "goal");
    link.href = `/s/${encodeURIComponent(card.id)}`;
    link.dataset.nav = "";
    const stop = el("button", "stop", "Stop");
    stop.type = "button";
    stop.addEventListener("click", () => stopSession(card.id));
    node.append(thumb, link, el("div", "state"), el("div", "status"), el("div", "meta muted"), el("div", "badge"), stop);
    box.prepend(node);
    $("no-sessions").hidden = true;
    if (window.deskpilotFrames) window.deskpilotFrames.paint(thumb);  // its picture, if it came first
  }
  node.dataset.state = card.state;
  node.setAttribute("aria-label", `Session: ${card.goal}`);
  const goal = node.querySelector(".goal");
  goal.textContent = card.goal;
  goal.title = card.goal;
  node.querySelector(".thumb").setAttribute("aria-label", `Live thumbnail of the session's window (${card.label}): ${card.goal}`);
  node.querySelector(".state").textContent = card.label;
  node.querySelector(".status").textContent = card.status;
  node.querySelector(".meta").textContent = meta(card);
  const badge = node.querySelector(".badge");
  badge.textContent = card.pending.length ? `${card.pending.length} waiting for your approval` : "";
  badge.hidden = !card.pending.length;
  const stop = node.querySelector(".stop");
  stop.hidden = !canStop(card) && !card.kept;
  stop.textContent = card.kept ? "Close desktop" : "Stop";
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
  if (card.kind === "task" && card.cost !== null && card.cost !== undefined) parts.push(money(card.cost));
  if (card.kept) parts.push("desktop kept: write to continue");
  return parts.join(" · ");
}

async function stopSession(id) {
  const r = await post(`/api/sessions/${encodeURIComponent(id)}/stop`);
  if (!r.ok) alert(r.data.error || `Stop failed (${r.status})`);
}

// -- new session form ----------------------------------------------------------------------

async function loadConfig() {
  const r = await get("/api/config");
  state.config = await r.json();
  const form = $("new-session");
  form.elements.model.value = state.config.model || "";
  form.elements.confirm.value = state.config.confirm || "consequential";
  form.elements.cleanup.checked = !!state.config.cleanup;
  form.elements.max_steps.placeholder = String(state.config.max_steps || "");
  form.elements.timeout.placeholder = String(state.config.timeout || "");
}

$("new-session").elements.cleanup.addEventListener("change", async (ev) => {
  const r = await post("/api/settings", {cleanup: ev.target.checked});
  if (!r.ok) $("form-error").textContent = r.data.error || `refused (${r.status})`;
});

async function loadWindows() {
  const select = $("new-session").elements.window;
  select.replaceChildren(el("option", null, "(none: the model picks)"));
  select.firstChild.value = "";
  const r = await get("/api/windows");
  if (!r.ok) return;
  for (const w of await r.json()) {
    const option = el("option", null, w.blocked ? `${w.app} (blocked)` : `${w.app}: ${w.title}`);
    option.value = w.stable_window_id;
    option.disabled = !!w.blocked;
    select.append(option);
  }
}

// The Window field is for this desktop only: it hides for a sandbox, and a window chosen
// before switching is cleared out loud (a sandbox is a new desktop: none of its windows exist).
$("new-session").elements.target.addEventListener("change", (ev) => {
  const here = ev.target.value === "desktop";
  const select = $("new-session").elements.window;
  $("window-field").hidden = !here;
  $("window-cleared").textContent = "";
  if (!here && select.value) {
    const chosen = select.options[select.selectedIndex].textContent;
    select.value = "";
    $("window-cleared").textContent = `The window you chose (${chosen}) was cleared: a sandbox is a new desktop, none of this desktop's windows are on it.`;
  }
  if (here) loadWindows();
});

function numberField(input) {
  const text = input.value.trim();
  return text === "" ? undefined : Number(text);
}

$("new-session").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const f = ev.target.elements;
  const body = {goal: f.goal.value, model: f.model.value, confirm: f.confirm.value, target: f.target.value};
  if (f.window.value) body.window = f.window.value;  // the server refuses one for a sandbox
  const steps = numberField(f.max_steps), timeout = numberField(f.timeout);
  if (steps !== undefined) body.max_steps = steps;
  if (timeout !== undefined) body.timeout = timeout;
  if (f.tool_protocol.value) body.tool_protocol = f.tool_protocol.value;
  if (f.mode.value && f.mode.value !== "elements") body.mode = f.mode.value;
  const r = await post("/api/sessions", body);
  $("form-error").textContent = r.ok ? "" : (r.data.error || `refused (${r.status})`);
  if (r.ok) { f.goal.value = ""; $("window-cleared").textContent = ""; state.focusNew = r.data.id; onCard(r.data); }
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
  $("s-close").hidden = !card.kept;
  $("s-close").onclick = () => stopSession(id);
  $("s-again").hidden = card.kind !== "task";
  $("s-cost").textContent = card.kind === "task"
    ? `Tokens and cost: ${usageText(card.tokens, card.cost, card.model)} · ${card.calls} tool call${card.calls === 1 ? "" : "s"}`
    : "";
  renderRuns(card);
  const done = ["done", "needs_attention", "stopped"].includes(card.state);
  $("s-answer-box").hidden = !(done && card.answer);
  $("s-answer").textContent = card.answer || "";
  $("preview").setAttribute("aria-label", card.taken_over
    ? "Your controls: pointer and keys here go to the session's desktop"
    : `Live preview of the session's window: ${card.title || card.goal}`);
  renderPending(card);
  if (fresh) {
    const canvas = $("preview");
    canvas.getContext("2d").clearRect(0, 0, canvas.width, canvas.height);
    delete canvas.dataset.seq;
    $("preview-note").hidden = false;
    $("chips").replaceChildren();
    for (const item of state.chips.get(id) || []) addChip(item);
  }
  document.dispatchEvent(new CustomEvent("deskpilot:session", {detail: {card, fresh}}));
}

function renderRuns(card) {
  const box = $("s-runs");
  const ids = card.runs && card.runs.length ? card.runs : (card.run_id ? [card.run_id] : []);
  if (box.dataset.runs === ids.join(",")) return;
  box.dataset.runs = ids.join(",");
  box.replaceChildren();
  ids.forEach((run, i) => {
    const a = el("a", null, ids.length > 1 ? `run ${i + 1} in the audit log ›` : "audit log ›");
    a.href = `/audit/${encodeURIComponent(run)}`;
    a.dataset.nav = "";
    a.className = "run-link";
    box.append(a, " ");
  });
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

const CHIP_KINDS = new Set(["tool.call", "tool.result", "confirm.asked", "confirm.answered", "model.text", "run.finished", "computer.call",
  "run.started", "user.message", "model.usage", "takeover.started", "takeover.ended", "policy.decided", "policy.grants"]);
let chipSerial = 0;

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
  if (item.at) chip.dataset.at = String(item.at);
  chip.dataset.shownAt = String(item.shownAt || now());
  if (d.call_id) chip.dataset.call = d.call_id;
  if (item.event === "tool.call" || item.event === "computer.call") {
    // a button: opened with a click or from the keyboard (Enter, Space)
    const toggle = el("button", "chip-toggle");
    toggle.type = "button";
    toggle.setAttribute("aria-expanded", "false");
    toggle.append(el("span", "tool", d.tool || "computer"), el("span", "args", d.args_json || ""), el("span", "result", "…"));
    const more = el("pre", "more");
    more.id = `chip-more-${++chipSerial}`;
    more.hidden = true;
    toggle.setAttribute("aria-controls", more.id);
    toggle.addEventListener("click", () => {
      const open = chip.classList.toggle("open");
      toggle.setAttribute("aria-expanded", String(open));
    });
    chip.append(toggle, more);
  } else if (item.event === "run.started") {
    const first = !list.querySelector('li[data-event="run.started"]');
    chip.className = "chip note request";
    chip.append(el("span", "tool", first ? "goal" : "you"), el("span", "text", d.goal || ""));
  } else if (item.event === "user.message") {
    chip.className = "chip note request";
    chip.append(el("span", "tool", "read your message"), el("span", "text", d.text || ""));
  } else if (item.event === "model.usage") {
    chip.className = "chip step";
    chip.dataset.exchange = String(d.exchange);
    const label = d.error ? `model call failed: ${d.error}` : usageText(d.tokens, d.cost, d.model);
    chip.append(el("span", "tool", `step ${d.exchange}`), el("span", "usage", label));
    const raw = el("button", "raw-open", "raw");
    raw.type = "button";
    raw.setAttribute("aria-label", `Raw request and reply of step ${d.exchange}`);
    raw.addEventListener("click", () => window.deskpilotCosts && window.deskpilotCosts.openRaw(state.view.id, d.exchange, raw));
    chip.append(raw);
  } else if (item.event === "takeover.started") {
    chip.className = "chip note takeover";
    chip.append(el("span", "tool", "you took over"), el("span", "text", "the agent waits"));
  } else if (item.event === "takeover.ended") {
    chip.className = "chip note takeover";
    const note = d.note ? `note: ${d.note}` : "no note";
    chip.append(el("span", "tool", `you handed back after ${Math.round(d.seconds || 0)} s`), el("span", "text", `${d.clicks || 0} clicks, ${d.keys || 0} keys · ${note}`));
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
  const [runs, verify] = await Promise.all([get("/api/runs").then((r) => r.json()), get("/api/audit/verify").then((r) => r.json())]);
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
  const r = await get(`/api/runs/${encodeURIComponent(id)}`);
  const steps = $("r-steps");
  steps.replaceChildren();
  if (!r.ok) { $("r-goal").textContent = "No such run"; return; }
  const run = await r.json();
  const start = run.events.find((e) => e.event === "run.started");
  const end = [...run.events].reverse().find((e) => e.event === "run.finished");
  $("r-goal").textContent = start ? start.data.goal : run.id;
  const stepCount = end && Number.isInteger(end.data.steps) ? ` · ${end.data.steps} step${end.data.steps === 1 ? "" : "s"}` : "";
  $("r-meta").textContent = `${run.id} · ${start ? start.data.model : ""} · ${end ? end.data.outcome : "not finished"}${stepCount}`;
  const used = run.usage || {};
  $("r-cost").textContent = used.model ? `Tokens and cost: ${usageText(used.tokens, used.cost, used.model)}` : "";
  $("r-export").href = `/api/runs/${encodeURIComponent(run.id)}/export.zip`;
  $("r-export-md").href = `/api/runs/${encodeURIComponent(run.id)}/export.md`;
  const calls = new Map();
  for (const e of run.events) {
    const d = e.data || {};
    if (e.event === "model.usage") {
      const li = el("li", "usage-line");
      li.append(el("div", "muted", `model call ${d.exchange}: ${d.error ? "failed: " + d.error : usageText(d.tokens, d.cost, d.model)}`));
      steps.append(li);
    } else if (e.event === "user.message" || e.event === "takeover.ended") {
      const li = el("li", "note-line");
      li.append(el("div", "muted", e.event === "user.message" ? `your message: ${d.text}` : `you took over for ${Math.round(d.seconds || 0)} s; note: ${d.note || "(none)"}`));
      steps.append(li);
    } else if (e.event === "tool.call") {
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

// -- keyboard: a new confirmation card takes the focus -----------------------------------------
// (watching the pinned area, so the card's own code is untouched). The card itself is focused,
// not its Approve button: Enter never approves by accident. Someone typing keeps their focus.

new MutationObserver((changes) => {
  for (const change of changes) {
    for (const node of change.addedNodes) {
      if (!(node instanceof HTMLElement) || !node.classList.contains("confirm")) continue;
      node.tabIndex = -1;
      node.setAttribute("role", "alertdialog");
      const title = node.querySelector("h3");
      if (title) { title.id = title.id || `confirm-${node.dataset.call}`; node.setAttribute("aria-labelledby", title.id); }
      const typing = document.activeElement && document.activeElement.matches("textarea, input, select, canvas[tabindex]");
      if (!typing) node.focus();
    }
  }
}).observe($("pending"), {childList: true});

// -- start ---------------------------------------------------------------------------------

// once every script of the page has run (they are deferred: DOMContentLoaded follows the last),
// so that the modules that render a session when told (talk, takeover, costs) hear its first
// render even when their script arrives after the session's events
document.addEventListener("DOMContentLoaded", async () => {
  state.view = route();
  await loadConfig();
  connect();
  show();
});
