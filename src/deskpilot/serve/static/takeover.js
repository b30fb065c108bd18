// deskpilot console: "Take over" — the live preview becomes the session's screen under your
// pointer and keyboard; its agent waits until you hand back (with a note the model reads).
// Events go in order, one request at a time, to /api/sessions/{id}/input; pointer moves are
// merged while a request is on its way. Ctrl+] leaves the preview (keys stay on this page).
"use strict";

(() => {
  const canvas = $("preview");
  const toggle = $("takeover");
  const handback = $("handback");
  let card = null;
  let queue = [];
  let sending = false;
  const held = new Set();  // keys sent down and not yet up

  function active() { return !!(card && card.taken_over); }

  function render(c) {
    card = c;
    const task = c.kind === "task";
    toggle.hidden = !task;
    $("takeover-help").hidden = !task;
    if (!task) return;
    const allowed = c.takeover && c.takeover.allowed;
    toggle.disabled = !allowed && !c.taken_over;
    toggle.setAttribute("aria-checked", String(!!c.taken_over));
    toggle.textContent = c.taken_over ? "Taken over: hand back" : "Take over";
    $("takeover-help").textContent = !allowed && !c.taken_over
      ? `Take over is not available: ${(c.takeover && c.takeover.why_not) || "no desktop"}.`
      : c.taken_over
        ? "You have the controls: pointer and keys on the preview go to this session's desktop; its agent waits."
        : "Hands you this session's pointer and keyboard; its agent waits until you hand back.";
    handback.hidden = !c.taken_over;
    canvas.classList.toggle("controlled", !!c.taken_over);
    if (c.taken_over) canvas.tabIndex = 0; else canvas.removeAttribute("tabindex");
  }

  async function start() {
    const r = await post(`/api/sessions/${encodeURIComponent(card.id)}/takeover`, {on: true});
    if (!r.ok) { $("takeover-help").textContent = r.data.error || `refused (${r.status})`; return; }
    onCard(r.data.card);
    canvas.focus();
  }

  async function giveBack() {
    await flush();
    const note = handback.elements.note.value;
    const r = await post(`/api/sessions/${encodeURIComponent(card.id)}/takeover`, {on: false, note});
    if (!r.ok) { $("handback-error").textContent = r.data.error || `refused (${r.status})`; return; }
    $("handback-error").textContent = "";
    handback.elements.note.value = "";
    held.clear();
    onCard(r.data.card);
    toggle.focus();
  }

  toggle.addEventListener("click", () => { if (card) (active() ? giveBack() : start()); });
  handback.addEventListener("submit", (ev) => { ev.preventDefault(); giveBack(); });

  // -- events to the session's screen ----------------------------------------------------------

  function point(ev) {
    const o = window.deskpilotFrames && window.deskpilotFrames.origin;
    const box = canvas.getBoundingClientRect();
    const x = Math.floor((ev.clientX - box.left) * canvas.width / box.width);
    const y = Math.floor((ev.clientY - box.top) * canvas.height / box.height);
    const inside = (v, n) => Math.max(0, Math.min(n - 1, v));
    return {x: inside(x, canvas.width) + (o && o.s === card.id ? o.X : 0),
            y: inside(y, canvas.height) + (o && o.s === card.id ? o.Y : 0)};
  }

  function push(event) {
    if (!active()) return;
    const last = queue[queue.length - 1];
    if (event.t === "move" && last && last.t === "move") queue[queue.length - 1] = event;
    else queue.push(event);
    pump();
  }

  async function pump() {
    if (sending || !queue.length || !card) return;
    sending = true;
    const batch = queue;
    queue = [];
    try {
      const r = await post(`/api/sessions/${encodeURIComponent(card.id)}/input`, {events: batch});
      if (!r.ok) $("handback-error").textContent = r.data.error || `input refused (${r.status})`;
    } finally {
      sending = false;
      if (queue.length) pump();
    }
  }

  async function flush() {
    while (sending || queue.length) {
      pump();
      await new Promise((done) => setTimeout(done, 20));
    }
  }

  const BUTTONS = ["left", "middle", "right"];
  canvas.addEventListener("mousemove", (ev) => { if (active()) push({t: "move", ...point(ev)}); });
  canvas.addEventListener("mousedown", (ev) => {
    if (!active()) return;
    ev.preventDefault();
    canvas.focus();
    push({t: "button", button: BUTTONS[ev.button] || "left", down: true, ...point(ev)});
  });
  canvas.addEventListener("mouseup", (ev) => {
    if (!active()) return;
    ev.preventDefault();
    push({t: "button", button: BUTTONS[ev.button] || "left", down: false, ...point(ev)});
  });
  canvas.addEventListener("contextmenu", (ev) => { if (active()) ev.preventDefault(); });
  let wheelX = 0, wheelY = 0;  // pixels scrolled not yet sent (a notch is about 100)
  const notches = (v) => (Math.abs(v) < 50 ? 0 : Math.sign(v) * Math.min(20, Math.max(1, Math.round(Math.abs(v) / 100))));
  canvas.addEventListener("wheel", (ev) => {
    if (!active()) return;
    ev.preventDefault();
    const scale = ev.deltaMode === 1 ? 40 : ev.deltaMode === 2 ? 800 : 1;
    wheelX += ev.deltaX * scale;
    wheelY += ev.deltaY * scale;
    const dx = notches(wheelX), dy = notches(wheelY);
    if (!dx && !dy) return;
    if (dx) wheelX = 0;
    if (dy) wheelY = 0;
    push({t: "wheel", dx, dy, ...point(ev)});
  }, {passive: false});

  canvas.addEventListener("keydown", (ev) => {
    if (!active()) return;
    if (ev.key === "]" && ev.ctrlKey) {  // leave the preview: the keyboard is the page's again
      ev.preventDefault();
      handback.elements.note.focus();
      return;
    }
    ev.preventDefault();
    if (ev.key.length === 1 && !ev.ctrlKey && !ev.altKey && !ev.metaKey) {
      push({t: "text", text: ev.key});
      return;
    }
    held.add(ev.key);
    push({t: "key", key: ev.key, down: true});
  });
  canvas.addEventListener("keyup", (ev) => {
    if (!active() || !held.has(ev.key)) return;
    ev.preventDefault();
    held.delete(ev.key);
    push({t: "key", key: ev.key, down: false});
  });
  canvas.addEventListener("blur", () => {  // keys still down would stay down: let them go
    for (const key of held) push({t: "key", key, down: false});
    held.clear();
  });

  document.addEventListener("deskpilot:session", (ev) => render(ev.detail.card));
  window.deskpilotTakeover = {queued: () => queue.length + (sending ? 1 : 0)};
})();
