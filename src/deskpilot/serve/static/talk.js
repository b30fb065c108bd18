// deskpilot console: talking to a session — a message for its next step, "Interrupt and send",
// continuing a finished session on its kept desktop, "Run again" with the same goal and settings.
// Uses console.js's helpers ($, el, post, go); all text is set with textContent.
"use strict";

(() => {
  const form = $("talk");
  const text = $("talk-text");
  let card = null;

  function kept(c) {
    if (!c.kept_until) return "";
    const at = new Date(c.kept_until * 1000).toLocaleTimeString([], {hour: "2-digit", minute: "2-digit"});
    return ` Its desktop is kept until ${at} (or until you close it).`;
  }

  function render(c) {
    card = c;
    const task = c.kind === "task";
    form.hidden = !task;
    $("s-again").hidden = !task;
    if (!task) return;
    const running = !["done", "needs_attention", "stopped", "stopping"].includes(c.state);
    const send = $("talk-send"), interrupt = $("talk-interrupt");
    interrupt.hidden = !running;
    const closed = !running && !c.kept;
    text.disabled = send.disabled = closed || c.state === "stopping";
    if (running) {
      $("talk-label").textContent = "Message for the agent";
      send.textContent = "Send";
      const waiting = c.messages_waiting
        ? ` ${c.messages_waiting} message${c.messages_waiting === 1 ? "" : "s"} waiting for its next step.` : "";
      $("talk-help").textContent = "Its next step reads your message; “Interrupt and send” stops what it is doing first." + waiting;
    } else if (c.kept) {
      $("talk-label").textContent = "Continue this session";
      send.textContent = "Continue";
      $("talk-help").textContent = "It carries on in the same context (it remembers the goal and what it did), on the same desktop." + kept(c);
    } else {
      $("talk-label").textContent = "Continue this session";
      send.textContent = "Continue";
      $("talk-help").textContent = "This session's desktop is closed, so it cannot continue. “Run again” starts it afresh with the same goal and settings.";
    }
  }

  async function say(interrupt) {
    if (!card) return;
    const value = text.value.trim();
    if (!value) { $("talk-error").textContent = "Write a message first."; text.focus(); return; }
    $("talk-send").disabled = $("talk-interrupt").disabled = true;
    const r = await post(`/api/sessions/${encodeURIComponent(card.id)}/messages`, {text: value, interrupt});
    $("talk-send").disabled = $("talk-interrupt").disabled = false;
    if (!r.ok) { $("talk-error").textContent = r.data.error || `refused (${r.status})`; return; }
    $("talk-error").textContent = "";
    text.value = "";
    const how = {queued: "Sent: its next step reads it.", interrupted: "Interrupted: it reads your message now.",
      continued: "Continuing with your message."}[r.data.taken] || "Sent.";
    $("talk-help").textContent = how;
    if (r.data.card) onCard(r.data.card);
  }

  form.addEventListener("submit", (ev) => { ev.preventDefault(); say(false); });
  $("talk-interrupt").addEventListener("click", () => say(true));
  text.addEventListener("keydown", (ev) => {
    if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey)) { ev.preventDefault(); say(false); }
  });

  $("s-again").addEventListener("click", async () => {
    if (!card) return;
    const r = await post(`/api/sessions/${encodeURIComponent(card.id)}/again`);
    if (!r.ok) { $("talk-error").textContent = r.data.error || `refused (${r.status})`; return; }
    onCard(r.data);
    go(`/s/${encodeURIComponent(r.data.id)}`);
    $("s-goal").focus();
  });

  document.addEventListener("deskpilot:session", (ev) => {
    if (ev.detail.fresh) { $("talk-error").textContent = ""; }
    render(ev.detail.card);
  });
})();
