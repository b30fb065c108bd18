// deskpilot page-rules bridge (isolated world): carries rule errors from the page runtime to
// the extension's storage, re-applies a tab's open TEMP panes after a reload, and serves the
// GM API of userscripts (values, requests, menus, notifications, tabs, clipboard, elements)
// on the channel the page runtime names at document start. deskpilot reaches it over CDP
// (this world cannot be touched by the page).
(() => {
  "use strict";
  if (globalThis.__dpBridge) return;
  const send = (msg) => chrome.runtime.sendMessage(msg);
  const token = (crypto.randomUUID && crypto.randomUUID()) || String(Math.random());
  const known = new Map();  // rule id -> the values this document last saw
  const ports = new Map();  // request id -> port (GM_xmlhttpRequest, GM_download)
  let CH = null;
  let nodeIn = null;
  globalThis.__dpBridge = {
    call: (msg) => send(msg),
    version: 2,
  };

  function toPage(msg) {
    if (!CH) return;
    document.dispatchEvent(new CustomEvent(CH + ":out", { detail: JSON.stringify(msg) }));
  }
  function answer(msg, promise) {
    promise.then(
      (reply) => toPage({ ...(reply && typeof reply === "object" ? reply : {}), id: msg.id }),
      (err) => toPage({ id: msg.id, error: String((err && err.message) || err) }),
    );
  }
  function checked(reply) {
    if (reply && reply.error !== undefined) throw new Error(reply.error);
    return reply || {};
  }

  // -- values
  async function valuesGet(msg) {
    const key = "v:" + msg.rule;
    let entry = (await chrome.storage.local.get(key))[key];
    const want = msg.epoch || 0;
    if ((!entry && want > 0) || (entry && (entry.epoch || 0) < want)) {
      // deskpilot set values the worker has not given the browser yet
      checked(await send({ op: "values-sync" }));
      entry = (await chrome.storage.local.get(key))[key];
    }
    const data = (entry && entry.data) || {};
    known.set(msg.rule, { ...data });
    return { data };
  }
  chrome.storage.onChanged.addListener((changes, area) => {
    if (area !== "local") return;
    for (const key of Object.keys(changes)) {
      if (!key.startsWith("v:")) continue;
      const rule = key.slice(2);
      const had = known.get(rule);
      if (!had) continue;
      const now = (changes[key].newValue && changes[key].newValue.data) || {};
      known.set(rule, { ...now });
      if (changes[key].newValue && changes[key].newValue.by === token) continue;
      const diff = {};
      let any = false;
      for (const k of new Set([...Object.keys(had), ...Object.keys(now)])) {
        if (JSON.stringify(had[k]) !== JSON.stringify(now[k])) {
          diff[k] = k in now ? now[k] : null;
          any = true;
        }
      }
      if (any) toPage({ op: "values-changed", rule, changes: diff });
    }
  });

  // -- elements made here, where the page's CSP does not apply
  function addElement(msg) {
    const el = document.createElement(msg.tag);
    for (const [k, v] of Object.entries(msg.attrs || {})) {
      if (k === "textContent") el.textContent = v;
      else if (k === "innerHTML") throw new Error("innerHTML is not an attribute: use textContent or child elements");
      else el.setAttribute(k, v);
    }
    const parent = msg.parent ? nodeIn : (document.head || document.documentElement);
    nodeIn = null;
    if (parent) parent.appendChild(el);
    else {
      const mo = new MutationObserver(() => {
        const p = document.head || document.documentElement;
        if (p) { mo.disconnect(); p.appendChild(el); }
      });
      mo.observe(document, { childList: true, subtree: true });
    }
    document.dispatchEvent(new MouseEvent(CH + ":node", { relatedTarget: el }));
  }

  // -- requests that stream (a port each)
  function stream(msg) {
    const port = chrome.runtime.connect({ name: msg.op });
    ports.set(msg.id, port);
    port.onMessage.addListener((m) => {
      toPage({ ...m, id: msg.id });
      if (m.event === "loadend" || m.final) { ports.delete(msg.id); port.disconnect(); }
    });
    port.onDisconnect.addListener(() => ports.delete(msg.id));
    port.postMessage(msg);
  }

  // what the page runtime may ask for on its channel (nothing else reaches the worker)
  const CHANNEL_OPS = new Set([
    "add-element", "values-get", "values-set", "xhr", "download", "xhr-abort", "download-abort",
    "menu-set", "menu-remove", "notify", "notify-remove", "clipboard", "open-tab", "close-tab",
    "focus-tab", "tab-get", "tab-save", "tabs-get", "unwrap",
  ]);
  function onRequest(e) {
    let msg;
    try { msg = JSON.parse(e.detail); } catch (err) { return; }
    if (!msg || typeof msg.op !== "string") return;
    if (!CHANNEL_OPS.has(msg.op)) { toPage({ id: msg.id, error: `unknown request ${msg.op}` }); return; }
    switch (msg.op) {
      case "add-element":
        try { addElement(msg); } catch (err) { toPage({ id: msg.id, error: String(err.message || err) }); }
        return;
      case "values-get":
        answer(msg, valuesGet(msg));
        return;
      case "values-set": {
        const had = known.get(msg.rule) || {};
        for (const [k, v] of Object.entries(msg.changes || {})) {
          if (v === null) delete had[k]; else had[k] = v;
        }
        known.set(msg.rule, had);
        answer(msg, send({ op: "values-set", rule: msg.rule, changes: msg.changes, by: token }).then(checked));
        return;
      }
      case "xhr":
      case "download":
        stream(msg);
        return;
      case "xhr-abort":
      case "download-abort": {
        const port = ports.get(msg.req);
        if (port) port.postMessage({ abort: true });
        return;
      }
      default:
        answer(msg, send(msg).then(checked));
    }
  }

  document.addEventListener("deskpilot-pages:connect", (e) => {
    if (CH || typeof e.detail !== "string" || !e.detail.startsWith("deskpilot-pages:")) return;
    e.stopImmediatePropagation();
    CH = e.detail;
    document.addEventListener(CH + ":in", onRequest);
    document.addEventListener(CH + ":nodein", (ev) => { nodeIn = ev.relatedTarget; });
  });

  // what the extension sends this frame: a menu command to run, a notification clicked or
  // closed, a tab a script opened now closed
  chrome.runtime.onMessage.addListener((msg) => {
    if (msg && msg.toPage) toPage(msg.toPage);
  });

  document.addEventListener("deskpilot-pages:error", (e) => {
    if (typeof e.detail === "string") send({ op: "error", detail: e.detail }).catch(() => {});
  });
  let isTop = false;
  try { isTop = window.top === window; } catch (e) { isTop = false; }
  // a document started: its frame's old menu commands go; the top one gets its open panes
  send({ op: "hello" }).then((reply) => {
    if (isTop && reply && typeof reply.css === "string") {
      const detail = JSON.stringify({ kind: "css", code: reply.css });
      document.dispatchEvent(new CustomEvent("deskpilot-pages:pane", { detail }));
    }
  }).catch(() => {});
})();
