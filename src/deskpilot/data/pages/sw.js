// deskpilot page-rules service worker. Keeps the dynamically registered rule set in step with
// gen/current.json (the manifest's own set is the one current when the browser started),
// stores rule errors for deskpilot to collect, and holds the tabs' TEMP panes.
// deskpilot calls sync() and drain() here directly over CDP (it wakes the worker if it
// stopped), so neither needs an open web tab.
"use strict";
const MAX_ERRORS = 500;

// one storage read-modify-write at a time: an error reported while deskpilot drains the list
// is neither lost nor taken twice
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

async function sync() {
  return serially(syncNow);
}
async function syncNow() {
  const res = await fetch(chrome.runtime.getURL("gen/current.json"), { cache: "no-store" });
  const current = await res.json();
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

const paneKey = (tab, kind) => `pane:${tab}:${kind}`;

async function handle(msg, sender) {
  const tab = msg.tab !== undefined ? msg.tab : sender.tab && sender.tab.id;
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
      // a top document of a tab started: give it back its open panes
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
  handle(msg || {}, sender).then(reply, (e) => reply({ error: String(e) }));
  return true;
});

chrome.tabs.onRemoved.addListener((tab) => {
  chrome.storage.session.remove([paneKey(tab, "css"), paneKey(tab, "js")]).catch(() => {});
});
