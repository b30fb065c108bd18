// deskpilot console: what a session costs — each step's raw model request and reply (a dialog),
// costs refreshed at the current prices, and the Prices page (the editable price table).
"use strict";

(() => {
  const dialog = $("raw");
  let opener = null;

  async function openRaw(sessionId, n, button) {
    opener = button || null;
    $("raw-title").textContent = `Step ${n}: the model call as sent and answered`;
    $("raw-meta").textContent = "loading…";
    $("raw-request").textContent = "";
    $("raw-response").textContent = "";
    dialog.showModal();
    const r = await get(`/api/sessions/${encodeURIComponent(sessionId)}/exchanges/${n}`);
    const x = await r.json();
    if (!r.ok) { $("raw-meta").textContent = x.error || `not found (${r.status})`; return; }
    const when = new Date(x.started * 1000).toLocaleTimeString();
    const card = state.sessions.get(sessionId);
    const usage = x.error ? `failed: ${x.error}` : usageText(x.tokens, x.cost, card && card.model);
    $("raw-meta").textContent = `${x.url} · ${when} · ${Math.round(x.ms)} ms · ${usage} · usage as sent: ${JSON.stringify(x.usage)}`;
    $("raw-request").textContent = x.kept ? x.request : "(no longer kept: the newest calls' bodies are kept in memory)";
    $("raw-response").textContent = x.kept ? (x.response || "(no reply)") : "";
  }

  dialog.addEventListener("close", () => { if (opener && opener.isConnected) opener.focus(); opener = null; });

  // step chips show the cost at the prices of when they arrived: bring them up to date
  async function refreshSteps(sessionId, model) {
    const r = await fetch(`/api/sessions/${encodeURIComponent(sessionId)}/steps`);
    if (!r.ok) return;
    const data = await r.json();
    for (const step of data.steps) {
      const chip = $("chips").querySelector(`li.step[data-exchange="${step.n}"] .usage`);
      if (chip && !step.error) chip.textContent = usageText(step.tokens, step.cost, model);
    }
  }

  document.addEventListener("deskpilot:session", (ev) => {
    if (ev.detail.fresh && ev.detail.card.kind === "task") refreshSteps(ev.detail.card.id, ev.detail.card.model);
  });

  // -- the Prices page ---------------------------------------------------------------------------

  const FIELDS = ["input", "output", "cached_input", "cache_write"];
  const NAMES = {input: "input", output: "output", cached_input: "cached input", cache_write: "cache write"};

  function row(model, price) {
    const tr = el("tr");
    const name = el("input");
    name.name = "model";
    name.value = model || "";
    name.placeholder = "provider:model";
    name.setAttribute("aria-label", "model");
    const cell = el("td");
    cell.append(name);
    tr.append(cell);
    for (const field of FIELDS) {
      const input = el("input");
      input.type = "number";
      input.min = "0";
      input.step = "any";
      input.name = field;
      input.value = price && price[field] !== undefined ? String(price[field]) : "";
      if (field !== "input" && field !== "output") input.placeholder = "= input";
      const td = el("td");
      td.append(input);
      tr.append(td);
    }
    const remove = el("button", "secondary", "Remove");
    remove.type = "button";
    remove.addEventListener("click", () => { tr.remove(); });
    const td = el("td");
    td.append(remove);
    tr.append(td);
    const label = () => {
      const m = name.value || "new model";
      for (const input of tr.querySelectorAll("input[type=number]")) input.setAttribute("aria-label", `${NAMES[input.name]} price of ${m}, dollars per million tokens`);
      remove.setAttribute("aria-label", `Remove ${m}`);
    };
    name.addEventListener("input", label);
    label();
    return tr;
  }

  async function loadPrices() {
    const r = await get("/api/prices");
    const data = await r.json();
    $("prices-path").textContent = data.path;
    $("prices-error").textContent = data.problem || "";
    $("prices-saved").textContent = "";
    const body = $("price-rows");
    body.replaceChildren();
    for (const [model, price] of Object.entries(data.prices)) body.append(row(model, price));
    if (!body.children.length) body.append(row(state.config.model || "", null));
  }

  $("price-add").addEventListener("click", () => {
    const tr = row("", null);
    $("price-rows").append(tr);
    tr.querySelector("input").focus();
  });

  $("prices").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const prices = {};
    for (const tr of $("price-rows").children) {
      const model = tr.querySelector("input[name=model]").value.trim();
      const values = {};
      for (const field of FIELDS) {
        const text = tr.querySelector(`input[name=${field}]`).value.trim();
        if (text !== "") values[field] = Number(text);
      }
      if (!model && !Object.keys(values).length) continue;  // an empty row
      prices[model] = values;
    }
    const r = await post("/api/prices", {prices});
    $("prices-error").textContent = r.ok ? "" : (r.data.error || `refused (${r.status})`);
    $("prices-saved").textContent = r.ok ? `Saved ${Object.keys(prices).length} price${Object.keys(prices).length === 1 ? "" : "s"}.` : "";
  });

  document.addEventListener("deskpilot:view", (ev) => { if (ev.detail.name === "prices") loadPrices(); });

  window.deskpilotCosts = {openRaw, refreshSteps};
})();
