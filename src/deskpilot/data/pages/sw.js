// deskpilot page-rules service worker. Keeps the dynamically registered rule set in step with
// gen/current.json (the manifest's own set is the one current when the browser started),
// stores rule errors for deskpilot to collect, holds the tabs' TEMP panes, and does for
// userscripts what a page cannot: values shared by every tab, cross-origin requests allowed by
// the script's @connect, menu commands, notifications, tabs, downloads, the clipboard.
// deskpilot calls sync(), drain(), dumpValues(), menus(), runMenu(), windows() and openTabs()
// here directly over CDP (it wakes the worker if it stopped), so none needs an open web tab.
"use strict";
const MAX_ERRORS = 500;
const MAX_BODY = 50 * 1024 * 1024;

// one storage read-modify-write at a time: an error reported while deskpilot drains the list
// is neither lost nor taken twice; two tabs writing one script's values both count
let queue = Promise.resolve();
function serially(fn) {
  const run = queue.then(fn, fn);
  queue = run.catch(() => {});
  return run;
}
function keep(detail) {
  return serially(async () => {
    const { errors = [] } = await chrome.storage.local.get("errors");
    errors.push(detail);
    await chrome.storage.local.set({ errors: errors.slice(-MAX_ERRORS) });
  });
}
function drain() {
  return serially(async () => {
    const { errors = [] } = await chrome.storage.local.get("errors");
    if (errors.length) await chrome.storage.local.set({ errors: [] });
    return { errors };
  });
}

function manifestRev() {
  for (const cs of chrome.runtime.getManifest().content_scripts || []) {
    for (const file of cs.js || []) {
      const m = /^gen\/(\d+)\//.exec(file);
      if (m) return Number(m[1]);
    }
  }
  return -1;
}
async function fileJson(path) {
  const res = await fetch(chrome.runtime.getURL(path), { cache: "no-store" });
  if (!res.ok) throw new Error(`${path}: HTTP ${res.status}`);
  return res.json();
}

async function sync() {
  return serially(syncNow);
}
async function syncNow() {
  const current = await fileJson("gen/current.json");
  await syncValuesNow();
  const have = await chrome.scripting.getRegisteredContentScripts({ ids: ["rules"] });
  if (current.rev <= manifestRev()) {
    if (have.length) await chrome.scripting.unregisterContentScripts({ ids: ["rules"] });
    return { rev: manifestRev(), dynamic: false };
  }
  const want = {
    id: "rules", js: current.files, matches: ["<all_urls>"], runAt: "document_start",
    allFrames: true, matchOriginAsFallback: true, world: "MAIN", persistAcrossSessions: false,
  };
  if (have.length && JSON.stringify(have[0].js) === JSON.stringify(current.files)) {
    return { rev: current.rev, dynamic: true };
  }
  if (have.length) await chrome.scripting.updateContentScripts([want]);
  else await chrome.scripting.registerContentScripts([want]);
  return { rev: current.rev, dynamic: true };
}
const synced = sync().catch((e) => ({ error: String(e) }));

// -- userscripts: what each may do (its @connect list), from the newest set
let scriptsCache = null;
async function scripts() {
  const current = await fileJson("gen/current.json");
  if (!scriptsCache || scriptsCache.rev !== current.rev) {
    let data = {};
    try { data = await fileJson(`gen/${current.rev}/scripts.json`); } catch (e) { data = {}; }
    scriptsCache = { rev: current.rev, data };
  }
  return scriptsCache.data;
}

// -- values: "v:<rule>" = {epoch, data, by}; deskpilot's gen/values.json seeds a script's
// values when its epoch is newer than the browser's copy (an import, `deskpilot rules values`)
async function syncValuesNow() {
  let file;
  try { file = await fileJson("gen/values.json"); } catch (e) { return; }
  const entries = file.values || {};
  const keys = Object.keys(entries).map((id) => "v:" + id);
  const have = keys.length ? await chrome.storage.local.get(keys) : {};
  const put = {};
  for (const [id, entry] of Object.entries(entries)) {
    const old = have["v:" + id];
    if (!old || (old.epoch || 0) < entry.epoch) {
      put["v:" + id] = { epoch: entry.epoch, data: entry.data || {}, by: "deskpilot" };
    }
  }
  if (Object.keys(put).length) await chrome.storage.local.set(put);
  const known = new Set(file.scripts || []);
  const all = await chrome.storage.local.get(null);
  const gone = Object.keys(all).filter((k) => k.startsWith("v:") && !known.has(k.slice(2)));
  if (gone.length) await chrome.storage.local.remove(gone);
}
function valuesSet(msg) {
  return serially(async () => {
    const key = "v:" + msg.rule;
    const entry = (await chrome.storage.local.get(key))[key] || { epoch: 0, data: {} };
    const data = { ...(entry.data || {}) };
    for (const [k, v] of Object.entries(msg.changes || {})) {
      if (v === null) delete data[k]; else data[k] = v;
    }
    await chrome.storage.local.set({ [key]: { epoch: entry.epoch || 0, data, by: msg.by || "" } });
    return { ok: true };
  });
}
async function dumpValues() {
  const all = await chrome.storage.local.get(null);
  const out = {};
  for (const [k, v] of Object.entries(all)) {
    if (k.startsWith("v:")) out[k.slice(2)] = { epoch: v.epoch || 0, data: v.data || {} };
  }
  return out;
}

// -- menu commands, per tab and frame: "menu:<tab>" = {frame: {rule: {key: command}}}
function menuEdit(tab, fn) {
  return serially(async () => {
    const key = "menu:" + tab;
    const got = (await chrome.storage.session.get(key))[key];
    const menus = got || {};
    if (fn(menus) === false) return;  // nothing changed
    if (Object.keys(menus).length) await chrome.storage.session.set({ [key]: menus });
    else if (got) await chrome.storage.session.remove(key);
  });
}
async function menus() {
  const all = await chrome.storage.session.get(null);
  const info = await scripts();
  const out = [];
  for (const [k, frames] of Object.entries(all)) {
    if (!k.startsWith("menu:")) continue;
    const tab = Number(k.slice(5));
    let t = null;
    try { t = await chrome.tabs.get(tab); } catch (e) { continue; }
    for (const [frame, rules] of Object.entries(frames)) {
      for (const [rule, cmds] of Object.entries(rules)) {
        for (const [cmd, c] of Object.entries(cmds)) {
          out.push({ tab, frame: Number(frame), url: t.url, title: t.title, rule,
                     script: (info[rule] && info[rule].name) || rule, key: cmd, caption: c.caption,
                     tooltip: c.title || "", accessKey: c.accessKey || "" });
        }
      }
    }
  }
  return out;
}
async function runMenu(tab, frame, rule, key) {
  await chrome.tabs.sendMessage(tab, { toPage: { op: "menu-run", rule, key } }, { frameId: frame });
  return { ok: true };
}

// -- notifications, tabs a script opened: who to tell when they are clicked, closed
async function sessionGet(key, fallback) {
  return (await chrome.storage.session.get(key))[key] || fallback;
}
async function sessionPut(key, fn) {
  return serially(async () => {
    const value = (await chrome.storage.session.get(key))[key] || {};
    fn(value);
    await chrome.storage.session.set({ [key]: value });
  });
}
function tell(target, msg) {
  if (!target) return;
  chrome.tabs.sendMessage(target.tab, { toPage: msg }, { frameId: target.frame }).catch(() => {});
}
async function notify(msg, sender) {
  if (msg.highlight && sender.tab) {  // Tampermonkey's "highlight": bring the tab forward
    await chrome.tabs.update(sender.tab.id, { active: true }).catch(() => {});
    await chrome.windows.update(sender.tab.windowId, { focused: true }).catch(() => {});
    if (!msg.text) return { ok: true, id: null };
  }
  const id = msg.tag || msg.nid;
  // as Violentmonkey does in Chrome: one with an onclick stays until clicked or dismissed
  const options = {
    type: "basic", title: msg.title || " ", message: msg.text || "",
    iconUrl: msg.image || chrome.runtime.getURL("icon.png"),
    silent: Boolean(msg.silent), requireInteraction: Boolean(msg.hasClick),
  };
  let made;
  try { made = await chrome.notifications.create(id, options); }
  catch (e) {
    if (!msg.image) throw e;
    options.iconUrl = chrome.runtime.getURL("icon.png");  // an image Chrome cannot load
    made = await chrome.notifications.create(id, options);
  }
  await sessionPut("notes", (notes) => {
    notes[made] = { tab: sender.tab && sender.tab.id, frame: sender.frameId, nid: msg.nid,
                    url: msg.url || "", rule: msg.rule, title: msg.title, text: msg.text };
  });
  if (msg.timeout > 0) setTimeout(() => chrome.notifications.clear(made), msg.timeout);
  return { ok: true, id: made };
}
chrome.notifications.onClicked.addListener(async (id) => {
  const note = (await sessionGet("notes", {}))[id];
  if (!note) return;
  tell(note, { op: "notification", nid: note.nid, event: "click" });
  if (note.url) chrome.tabs.create({ url: note.url }).catch(() => {});
  chrome.notifications.clear(id);
});
chrome.notifications.onClosed.addListener(async (id) => {
  const note = (await sessionGet("notes", {}))[id];
  if (!note) return;
  await sessionPut("notes", (notes) => { delete notes[id]; });
  tell(note, { op: "notification", nid: note.nid, event: "close" });
});
async function noteByNid(nid) {
  const notes = await sessionGet("notes", {});
  return Object.keys(notes).find((id) => notes[id].nid === nid);
}

// -- the clipboard, through an offscreen document (a worker has no DOM)
let offscreen = null;
async function clipboard(msg) {
  offscreen = offscreen || chrome.offscreen.createDocument({
    url: "offscreen.html", reasons: ["CLIPBOARD"], justification: "GM_setClipboard",
  }).catch((e) => { if (!String(e).includes("single offscreen")) { offscreen = null; throw e; } });
  await offscreen;
  const reply = await chrome.runtime.sendMessage({ target: "offscreen", op: "copy", data: msg.data, type: msg.type });
  if (!reply || !reply.ok) throw new Error("the clipboard refused the text");
  return { ok: true };
}

// -- GM_xmlhttpRequest: made here, allowed by the script's @connect list
function hostAllowed(connect, url, pageUrl) {
  let target;
  try { target = new URL(url); } catch (e) { return false; }
  let page = null;
  try { page = new URL(pageUrl); } catch (e) { page = null; }
  if (page && target.origin === page.origin) return true;
  const host = target.hostname.toLowerCase().replace(/^\[|\]$/g, "");
  for (const raw of connect || []) {
    const value = String(raw).trim().toLowerCase();
    if (!value) continue;
    if (value === "*") return true;
    if (value === "self") { if (page && host === page.hostname.toLowerCase()) return true; continue; }
    const domain = value.replace(/^[a-z][a-z0-9+.-]*:\/\//, "").replace(/[/:?#].*$/, "").replace(/^\*\./, "");
    if (host === domain || host.endsWith("." + domain)) return true;
  }
  return false;
}
function refused(url) {
  let host = url;
  try { host = new URL(url).hostname; } catch (e) { /* as given */ }
  return `Refused to connect to "${url}": ${host} is not in the script's @connect list ` +
    `(add // @connect ${host} to the script to allow it)`;
}
function b64(bytes) {
  let bin = "";
  for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
  return btoa(bin);
}
function unb64(text) {
  const bin = atob(text);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}
function bodyFor(body, headers) {
  if (!body) return undefined;
  if (body.type && !Object.keys(headers).some((k) => k.toLowerCase() === "content-type")) headers["Content-Type"] = body.type;
  if (body.text !== undefined) return body.text;
  if (body.b64 !== undefined) return unb64(body.b64);
  if (body.form) {
    const form = new FormData();
    for (const part of body.form) {
      if (part.text !== undefined) form.append(part.name, part.text);
      else form.append(part.name, new Blob([unb64(part.b64)], { type: part.type || "" }), part.filename || "blob");
    }
    return form;
  }
  return undefined;
}
async function xhr(port, msg) {
  const sender = port.sender || {};
  const pageUrl = sender.url || (sender.tab && sender.tab.url) || "";
  const post = (event, r) => { try { port.postMessage({ event, r }); } catch (e) { /* the page went */ } };
  const fail = (event, error, extra) => {
    post(event, { readyState: 4, status: 0, error, finalUrl: msg.url, ...(extra || {}) });
    post("loadend", { readyState: 4, status: 0, error, finalUrl: msg.url, ...(extra || {}) });
  };
  const info = (await scripts())[msg.rule];
  if (!info) { fail("error", "deskpilot knows no such userscript (was it deleted?)"); return; }
  if (!hostAllowed(info.connect, msg.url, pageUrl)) { fail("error", refused(msg.url)); return; }
  const controller = new AbortController();
  let why = "";
  port.onMessage.addListener((m) => { if (m && m.abort) { why = "abort"; controller.abort(); } });
  port.onDisconnect.addListener(() => { why = why || "abort"; controller.abort(); });
  let timer = null;
  if (msg.timeout > 0) timer = setTimeout(() => { why = "timeout"; controller.abort(); }, msg.timeout);
  const headers = { ...(msg.headers || {}) };
  if (msg.user !== undefined && msg.user !== null) {
    headers.Authorization = "Basic " + btoa(unescape(encodeURIComponent(`${msg.user}:${msg.password || ""}`)));
  }
  post("loadstart", { readyState: 1 });
  try {
    const res = await fetch(msg.url, {
      method: msg.method, headers, body: bodyFor(msg.body, headers), signal: controller.signal,
      credentials: msg.anonymous ? "omit" : "include", redirect: msg.redirect === "manual" ? "manual" : msg.redirect === "error" ? "error" : "follow",
      cache: msg.nocache ? "no-store" : "default",
    });
    if (res.url && res.url !== msg.url && !hostAllowed(info.connect, res.url, pageUrl)) {
      fail("error", refused(res.url));
      return;
    }
    const head = {
      status: res.status, statusText: res.statusText, finalUrl: res.url || msg.url,
      headers: [...res.headers.entries()], contentType: res.headers.get("content-type") || "",
    };
    const total = Number(res.headers.get("content-length")) || 0;
    post("readystatechange", { ...head, readyState: 2, total });
    const chunks = [];
    let loaded = 0;
    if (res.body) {
      const reader = res.body.getReader();
      let sentThree = false;
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        chunks.push(value);
        loaded += value.length;
        if (loaded > MAX_BODY) throw new Error(`the response is larger than ${MAX_BODY} bytes`);
        if (!sentThree) { sentThree = true; post("readystatechange", { ...head, readyState: 3, loaded, total }); }
        if (msg.progress) post("progress", { ...head, readyState: 3, loaded, total });
      }
    }
    const bytes = new Uint8Array(loaded);
    let at = 0;
    for (const c of chunks) { bytes.set(c, at); at += c.length; }
    const r = { ...head, readyState: 4, loaded, total: total || loaded, b64: b64(bytes) };
    post("readystatechange", r);
    post("load", r);
    post("loadend", r);
  } catch (e) {
    if (why === "timeout") fail("timeout", "timeout");
    else if (why === "abort") fail("abort", "aborted");
    else fail("error", String((e && e.message) || e));
  } finally {
    if (timer) clearTimeout(timer);
  }
}

// -- GM_download. One listener, added when the worker starts: a small file can be complete
// before chrome.downloads.download() has answered with its id, and a listener added only
// then never hears of it (Chrome had sent that change to no one).
const downloading = new Map();  // download id -> settle(state, error)
chrome.downloads.onChanged.addListener((delta) => {
  const settle = downloading.get(delta.id);
  if (settle && delta.state) settle(delta.state.current, delta.error && delta.error.current);
});
async function download(port, msg) {
  const post = (m) => { try { port.postMessage(m); } catch (e) { /* gone */ } };
  const sender = port.sender || {};
  const info = (await scripts())[msg.rule];
  const pageUrl = sender.url || (sender.tab && sender.tab.url) || "";
  if (!info || !hostAllowed(info.connect, msg.url, pageUrl)) {
    post({ event: "error", error: info ? refused(msg.url) : "no such userscript", final: true });
    return;
  }
  try {
    const headers = Object.entries(msg.headers || {}).map(([name, value]) => ({ name, value: String(value) }));
    const id = await chrome.downloads.download({
      url: msg.url, filename: msg.name, saveAs: Boolean(msg.saveAs),
      conflictAction: msg.conflictAction || "uniquify", headers,
    });
    const settle = (state, error) => {
      if (!downloading.has(id)) return;  // told already
      if (state === "complete") post({ event: "load", final: true });
      else if (state === "interrupted") post({ event: "error", error: error || "interrupted", final: true });
      else return;
      downloading.delete(id);
    };
    downloading.set(id, settle);
    port.onMessage.addListener((m) => { if (m && m.abort) chrome.downloads.cancel(id).catch(() => {}); });
    port.onDisconnect.addListener(() => downloading.delete(id));
    // it may have ended already, its change sent before its id was known here
    const [item] = await chrome.downloads.search({ id });
    if (item) settle(item.state, item.error);
  } catch (e) {
    post({ event: "error", error: String((e && e.message) || e), final: true });
  }
}

chrome.runtime.onConnect.addListener((port) => {
  port.onMessage.addListener(function first(msg) {
    port.onMessage.removeListener(first);
    if (port.name === "xhr") xhr(port, msg);
    else if (port.name === "download") download(port, msg);
  });
});

const paneKey = (tab, kind) => `pane:${tab}:${kind}`;

async function handle(msg, sender) {
  const tab = msg.tab !== undefined ? msg.tab : sender.tab && sender.tab.id;
  const here = sender.tab ? { tab: sender.tab.id, frame: sender.frameId } : null;
  switch (msg.op) {
    case "whoami":
      return { tab: sender.tab && sender.tab.id, frame: sender.frameId };
    case "sync":
      await synced;
      return await sync();
    case "error":
      await keep(msg.detail);
      return { ok: true };
    case "drain":
      return await drain();
    case "values-sync":
      await synced;
      await serially(syncValuesNow);
      return { ok: true };
    case "values-set":
      return await valuesSet(msg);
    case "menu-set":
      await menuEdit(here.tab, (m) => {
        const rules = (m[here.frame] = m[here.frame] || {});
        (rules[msg.rule] = rules[msg.rule] || {})[msg.key] = {
          caption: msg.caption, title: msg.title, accessKey: msg.accessKey, autoClose: msg.autoClose,
        };
      });
      return { ok: true };
    case "menu-remove":
      await menuEdit(here.tab, (m) => {
        const cmds = m[here.frame] && m[here.frame][msg.rule];
        if (cmds) delete cmds[msg.key];
        if (cmds && !Object.keys(cmds).length) delete m[here.frame][msg.rule];
        if (m[here.frame] && !Object.keys(m[here.frame]).length) delete m[here.frame];
      });
      return { ok: true };
    case "notify":
      return await notify(msg, sender);
    case "notify-remove": {
      const id = await noteByNid(msg.nid);
      if (id) await chrome.notifications.clear(id);
      return { ok: true };
    }
    case "clipboard":
      return await clipboard(msg);
    case "open-tab": {
      const t = sender.tab;
      if (!/^(https?|file|ftp|data):/i.test(msg.url) && msg.url !== "about:blank") {
        throw new Error(`GM_openInTab opens web pages only, not ${String(msg.url).slice(0, 60)}`);
      }
      const made = await chrome.tabs.create({
        url: msg.url, active: msg.active, pinned: msg.pinned, windowId: t && t.windowId,
        index: msg.insert && t ? t.index + 1 : undefined,
        openerTabId: msg.setParent && t ? t.id : undefined,
      });
      await sessionPut("opened", (o) => { o[made.id] = here; });
      return { tab: made.id };
    }
    case "close-tab": {
      // its own tab (window.close granted), or one this tab's scripts opened
      let target = sender.tab && sender.tab.id;
      if (msg.tab !== "self") {
        const opened = (await sessionGet("opened", {}))[Number(msg.tab)];
        if (!opened || !sender.tab || opened.tab !== sender.tab.id) throw new Error("not a tab this page opened");
        target = Number(msg.tab);
      }
      if (target !== undefined) await chrome.tabs.remove(target);
      return { ok: true };
    }
    case "focus-tab": {
      const t = sender.tab;
      if (t) {
        await chrome.tabs.update(t.id, { active: true });
        await chrome.windows.update(t.windowId, { focused: true });
      }
      return { ok: true };
    }
    case "tab-save":
      await sessionPut("gmtab:" + msg.rule, (o) => { o[here.tab] = msg.data; });
      return { ok: true };
    case "tab-get":  // after any save this tab made before (one queue)
      return serially(async () => ({ data: (await sessionGet("gmtab:" + msg.rule, {}))[here.tab] || {} }));
    case "tabs-get":
      return serially(async () => ({ data: await sessionGet("gmtab:" + msg.rule, {}) }));
    case "unwrap":
      if (!/^gen\/\d+\/r_[0-9a-f]+\.raw\.js$/.test(String(msg.file))) throw new Error("not a script file");
      await chrome.scripting.executeScript({
        target: { tabId: here.tab, frameIds: [here.frame] }, world: "MAIN", files: [msg.file],
        injectImmediately: true,
      });
      return { ok: true };
    case "pane-open": {
      const key = paneKey(tab, msg.kind);
      const got = await chrome.storage.session.get(key);
      if (got[key]) return { already_open: true, pane: got[key] };
      const pane = { kind: msg.kind, tab, code: "", file: null, url: msg.url || "" };
      await chrome.storage.session.set({ [key]: pane });
      return { already_open: false, pane };
    }
    case "pane-get": {
      const key = paneKey(tab, msg.kind);
      return { pane: (await chrome.storage.session.get(key))[key] || null };
    }
    case "pane-set": {
      const key = paneKey(tab, msg.kind);
      const got = (await chrome.storage.session.get(key))[key];
      if (!got) return { pane: null };
      const pane = { ...got, code: msg.code, file: msg.file || null };
      await chrome.storage.session.set({ [key]: pane });
      return { pane };
    }
    case "pane-close": {
      const key = paneKey(tab, msg.kind);
      const got = (await chrome.storage.session.get(key))[key] || null;
      await chrome.storage.session.remove(key);
      return { pane: got };
    }
    case "hello": {
      // a document started: its frame's menu commands are gone; a top one gets its panes
      if (here) {
        await menuEdit(here.tab, (m) => {
          if (!m[here.frame]) return false;
          delete m[here.frame];
          return true;
        });
      }
      if (!here || here.frame !== 0) return {};
      const css = (await chrome.storage.session.get(paneKey(tab, "css")))[paneKey(tab, "css")];
      const js = (await chrome.storage.session.get(paneKey(tab, "js")))[paneKey(tab, "js")];
      if (js && js.file) {
        chrome.scripting.executeScript({
          target: { tabId: tab, frameIds: [0] }, world: "MAIN", files: [js.file],
        }).catch(() => {});
      }
      return { css: css ? css.code : null };
    }
    default:
      return { error: `unknown op ${msg.op}` };
  }
}

chrome.runtime.onMessage.addListener((msg, sender, reply) => {
  if (!msg || msg.target === "offscreen") return false;
  handle(msg, sender).then(reply, (e) => reply({ error: String((e && e.message) || e) }));
  return true;
});

chrome.tabs.onRemoved.addListener(async (tab) => {
  chrome.storage.session.remove([paneKey(tab, "css"), paneKey(tab, "js"), "menu:" + tab]).catch(() => {});
  const opened = await sessionGet("opened", {});
  if (opened[tab]) {
    tell(opened[tab], { op: "tab-closed", tab });
    await sessionPut("opened", (o) => { delete o[tab]; });
  }
});

// -- the agent browser's windows, for deskpilot's open_urls (tabs in the window it tracks)
async function windows() {
  const all = await chrome.windows.getAll({ populate: true, windowTypes: ["normal"] });
  let focused = null;
  try { focused = (await chrome.windows.getLastFocused({ windowTypes: ["normal"] })).id; } catch (e) { focused = null; }
  return all.map((w) => ({
    id: w.id, left: w.left, top: w.top, width: w.width, height: w.height, state: w.state,
    focused: w.focused, lastFocused: w.id === focused,
    tabs: (w.tabs || []).map((t) => ({ id: t.id, url: t.url, title: t.title, active: t.active })),
  }));
}
async function openTabs(windowId, urls) {
  const made = [];
  for (let i = 0; i < urls.length; i++) {
    const t = await chrome.tabs.create({ windowId, url: urls[i], active: i === 0 });
    made.push(t.id);
  }
  await chrome.windows.update(windowId, { focused: true });
  return made;
}
async function tabsLoaded(ids) {
  for (const id of ids) {
    const t = await chrome.tabs.get(id);
    if (t.status !== "complete") return false;
  }
  return true;
}
