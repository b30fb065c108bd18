// deskpilot console: asks nobody misses (deskpilot.serve.approver).
// Every open page shows every session's open confirmation in a page-wide banner and in the tab
// title, whichever view it shows; tells the server once the banner is on a visible page (the
// card's time to answer starts then: a card is never declined unseen); highlights the element
// acted on over the live preview of its session; lists the grants of the session's task, each
// revocable. A sound and a desktop notification are offered, off unless the person turns them
// on. Every text from a screen, a model or a tool is set with textContent, never as HTML.
"use strict";

(() => {
  const cards = new Map();   // session id -> card
  const grants = new Map();  // session id -> Map(grant id -> grant)
  const told = new Set();    // "session/call" the server knows a page showed
  const known = new Set();   // "session/call" already announced (sound, notification)
  const baseTitle = document.title;
  const prefs = {sound: localStorage.getItem("asks.sound") === "1",
                 notify: localStorage.getItem("asks.notify") === "1"};
  let banner = null, grantsBox = null, overlay = null;

  function el(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  async function post(url, body) {
    const r = await fetch(url, {method: "POST", headers: {"content-type": "application/json"},
                                body: JSON.stringify(body || {})});
    let data = {};
    try { data = await r.json(); } catch (e) { data = {}; }
    return {ok: r.ok, status: r.status, data};
  }

  const enc = encodeURIComponent;
  const viewed = () => {
    const m = location.pathname.match(/^\/s\/([^/]+)$/);
    return m ? decodeURIComponent(m[1]) : null;
  };

  // -- the stream ------------------------------------------------------------------------

  // the console's own event stream (console.js hands on every item): a stream of its own
  // would have the server send, and this page read, every item twice
  document.addEventListener("deskpilot:item", (ev) => {
    const item = ev.detail;
    if (item.kind === "session") onCard(item.data);
    else if (item.kind === "event") onEvent(item.session, item.data);
  });

  function onCard(card) {
    cards.set(card.id, card);
    render();
  }

  function onEvent(session, item) {
    const d = item.data || {};
    let mine = grants.get(session);
    if (!mine) { mine = new Map(); grants.set(session, mine); }
    if (item.event === "policy.grants") {
      mine.clear();
      for (const g of d.grants || []) mine.set(g.id, g);
    } else if (item.event === "grant.added") {
      mine.set(d.id, d);
    } else if (item.event === "grant.revoked") {
      mine.delete(d.id);
    } else if (item.event === "run.finished" && !d.parent_run) {
      mine.clear();  // a grant ends with its task
    } else {
      return;
    }
    renderGrants();
  }

  // -- the banner ------------------------------------------------------------------------

  function waiting() {
    const out = [];
    for (const card of cards.values()) {
      for (const p of card.pending || []) out.push({card, p});
    }
    return out.sort((a, b) => a.p.asked - b.p.asked);
  }

  function ensureBanner() {
    if (banner) return banner;
    banner = el("section", "asks-banner");
    banner.id = "asks-banner";
    banner.setAttribute("role", "alert");
    banner.setAttribute("aria-live", "assertive");
    banner.hidden = true;
    document.body.prepend(banner);
    return banner;
  }

  function render() {
    const open = waiting();
    const box = ensureBanner();
    const keep = new Set(open.map(({card, p}) => `${card.id}/${p.call_id}`));
    for (const node of [...box.querySelectorAll("[data-ask]")]) {
      if (!keep.has(node.dataset.ask)) node.remove();
    }
    for (const {card, p} of open) {
      const key = `${card.id}/${p.call_id}`;
      let node = box.querySelector(`[data-ask="${CSS.escape(key)}"]`);
      if (!node) {
        node = askNode(card, p);
        node.dataset.ask = key;
        box.append(node);
        announce(key, card, p);
      }
      const left = node.querySelector(".asks-left");
      if (left) left.dataset.deadline = String(p.deadline || 0);
    }
    box.hidden = open.length === 0;
    document.body.classList.toggle("asks-waiting", open.length > 0);
    document.title = open.length ? `(${open.length}) ⚠ approval needed — ${baseTitle}` : baseTitle;
    tell();
    highlight();
    renderGrants();
  }

  function askNode(card, p) {
    const node = el("div", "asks-ask");
    const where = el("a", "asks-session", short(card.goal, 60));
    where.href = `/s/${enc(card.id)}`;
    where.dataset.nav = "";
    where.title = card.goal;
    const what = el("p", "asks-what", p.sentence || `${p.tool}: ${p.reason}`);
    const why = el("p", "asks-why", p.sentence ? `${p.risk}: ${p.reason}` : "");
    const once = el("button", "asks-once", "Allow once");
    const task = el("button", "asks-task", "Allow for this task");
    const no = el("button", "asks-no", "Decline");
    for (const b of [once, task, no]) b.type = "button";
    task.hidden = !p.offer;
    task.title = p.offer ? `Also allows: ${p.offer}` : "";
    const offer = el("p", "asks-offer", p.offer ? `“Allow for this task” also allows: ${p.offer}` : "");
    offer.hidden = !p.offer;
    const left = el("span", "asks-left");
    const status = el("span", "asks-status");
    const answer = async (approved, scope) => {
      once.disabled = task.disabled = no.disabled = true;
      const r = await post(`/api/sessions/${enc(card.id)}/confirmations/${enc(p.call_id)}`,
                           {approved, scope});
      if (!r.ok) status.textContent = r.data.error || `refused (${r.status})`;
    };
    once.addEventListener("click", () => answer(true, "once"));
    task.addEventListener("click", () => answer(true, "task"));
    no.addEventListener("click", () => answer(false, "once"));
    node.append(el("strong", null, "Approval needed: "), where, what, why, offer, once, task, no,
                left, status);
    return node;
  }

  function tick() {
    for (const left of document.querySelectorAll(".asks-left")) {
      const deadline = Number(left.dataset.deadline || 0);
      left.textContent = deadline
        ? `declined in ${Math.max(0, Math.round(deadline - Date.now() / 1000))} s without an answer`
        : "waiting for you";
    }
  }

  // the server starts a card's time to answer once a visible page shows its banner
  function tell() {
    if (document.visibilityState !== "visible" || !banner || banner.hidden) return;
    for (const node of banner.querySelectorAll("[data-ask]")) {
      const key = node.dataset.ask;
      if (told.has(key)) continue;
      told.add(key);
      const [session, call] = key.split("/");
      post(`/api/sessions/${enc(session)}/confirmations/${enc(call)}/seen`).then((r) => {
        if (!r.ok && r.status !== 404) told.delete(key);
      });
    }
  }

  function announce(key, card, p) {
    if (known.has(key)) return;
    known.add(key);
    if (prefs.sound) beep();
    if (prefs.notify && "Notification" in window && Notification.permission === "granted") {
      const n = new Notification("deskpilot: approval needed", {body: p.sentence || p.reason, tag: key});
      n.onclick = () => { window.focus(); location.href = `/s/${enc(card.id)}`; };
    }
  }

  function beep() {
    try {
      const ctx = new (window.AudioContext || window.webkitAudioContext)();
      const osc = ctx.createOscillator();
      osc.frequency.value = 880;
      osc.connect(ctx.destination);
      osc.start();
      osc.stop(ctx.currentTime + 0.15);
    } catch (e) { /* no audio here */ }
  }

  function toggles() {
    const bar = el("div", "asks-toggles");
    const sound = el("label", null);
    const s = el("input");
    s.type = "checkbox"; s.checked = prefs.sound;
    s.addEventListener("change", () => { prefs.sound = s.checked; localStorage.setItem("asks.sound", s.checked ? "1" : "0"); });
    sound.append(s, document.createTextNode(" sound on a new ask"));
    const notify = el("label", null);
    const n = el("input");
    n.type = "checkbox"; n.checked = prefs.notify;
    n.addEventListener("change", async () => {
      if (n.checked && "Notification" in window && Notification.permission !== "granted") {
        n.checked = (await Notification.requestPermission()) === "granted";
      }
      prefs.notify = n.checked;
      localStorage.setItem("asks.notify", n.checked ? "1" : "0");
    });
    notify.append(n, document.createTextNode(" desktop notification"));
    bar.append(sound, notify);
    return bar;
  }

  // -- the element on the live preview -----------------------------------------------------

  // The frame on the canvas changes its size (the first frame replaces the 1280×800 blank) and
  // the page around it moves (a banner, a card): the box lives in the canvas's own container
  // and is placed again whenever the canvas is resized, not only on the periodic tick.
  let watched = null;
  function highlight() {
    const id = viewed();
    const canvas = document.getElementById("preview");
    const card = id ? cards.get(id) : null;
    const p = card && (card.pending || []).find((x) => x.target);
    if (!overlay) {
      overlay = el("div", "asks-target");
      overlay.hidden = true;
    }
    if (canvas && watched !== canvas && "ResizeObserver" in window) {
      watched = canvas;
      new ResizeObserver(() => highlight()).observe(canvas);
    }
    // no box on the blank canvas before the window's first frame: it would mark a spot of
    // nothing, scaled to a size the canvas does not keep
    if (!p || !canvas || canvas.offsetParent === null || !canvas.dataset.seq) {
      overlay.hidden = true;
      return;
    }
    const host = canvas.parentElement;
    if (overlay.parentElement !== host) host.append(overlay);
    if (getComputedStyle(host).position === "static") host.style.position = "relative";
    const t = p.target;
    const w = canvas.clientWidth, h = canvas.clientHeight;
    const sx = w / (t.window_width || canvas.width || 1);
    const sy = h / (t.window_height || canvas.height || 1);
    const left = canvas.offsetParent === host ? canvas.offsetLeft : canvas.offsetLeft - host.offsetLeft;
    const top = canvas.offsetParent === host ? canvas.offsetTop : canvas.offsetTop - host.offsetTop;
    overlay.style.left = `${left + t.x * sx - 3}px`;
    overlay.style.top = `${top + t.y * sy - 3}px`;
    overlay.style.width = `${t.width * sx + 6}px`;
    overlay.style.height = `${t.height * sy + 6}px`;
    overlay.title = p.sentence || "";
    overlay.hidden = false;
  }

  // -- the task's grants ------------------------------------------------------------------

  function renderGrants() {
    const id = viewed();
    const host = document.getElementById("view-session");
    if (!host) return;
    if (!grantsBox) {
      grantsBox = el("section", "asks-grants panel");
      grantsBox.id = "asks-grants";
      host.prepend(grantsBox);
    }
    const mine = id ? grants.get(id) : null;
    grantsBox.replaceChildren();
    grantsBox.hidden = !mine || mine.size === 0;
    if (!mine || !mine.size) return;
    grantsBox.append(el("h3", null, "Allowed without asking in this task"));
    const list = el("ul", null);
    for (const g of mine.values()) {
      const item = el("li", null);
      item.dataset.grant = g.id;
      const from = g.source === "goal" ? `from the goal: “${g.words}”` : `your yes (${g.by || "console"})`;
      item.append(el("span", "asks-grant", g.text || (g.acts || []).join(", ")),
                  el("span", "muted", ` — ${from} `));
      const revoke = el("button", "asks-revoke", "Revoke");
      revoke.type = "button";
      revoke.addEventListener("click", async () => {
        revoke.disabled = true;
        const r = await post(`/api/sessions/${enc(id)}/grants/${enc(g.id)}/revoke`);
        if (!r.ok) { revoke.disabled = false; revoke.textContent = r.data.error || "Revoke failed"; }
      });
      item.append(revoke);
      list.append(item);
    }
    grantsBox.append(list);
  }

  function short(text, n) {
    const s = String(text || "");
    return s.length > n ? s.slice(0, n - 1) + "…" : s;
  }

  document.addEventListener("visibilitychange", tell);
  window.addEventListener("popstate", render);
  window.addEventListener("resize", highlight);
  window.addEventListener("scroll", highlight, true);
  document.addEventListener("click", (ev) => {
    if (ev.target.closest("a[data-nav]")) setTimeout(render, 0);  // the console's own routing
  });
  setInterval(() => { tick(); highlight(); if (viewed() !== lastView) { lastView = viewed(); render(); } }, 500);
  let lastView = viewed();

  function start() {
    const box = ensureBanner();
    box.append(toggles());
    render();
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
  // a policy event in words, for the console's chips (policy.grants has no sentence of its own)
  function said(item) {
    const d = item.data || {};
    if (item.event === "policy.grants") {
      const text = (d.grants || []).map((g) => g.text).join("; ");
      return text ? `the goal allows without asking: ${text}` : "the goal allows nothing consequential without asking";
    }
    return d.sentence || "";
  }
  window.deskpilotAsks = {cards, grants, render, said};  // for tests: read-only inspection
})();
