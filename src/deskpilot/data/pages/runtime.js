// deskpilot page-rules runtime (MAIN world). Loaded at document start by deskpilot's generated
// extension, or pushed into open documents by deskpilot over CDP. One instance per document;
// a later revision of the rule set replaces an earlier one.
//
// At document start Chromium injects the manifest's set (the one current when the browser
// started) and then, in the same task, the set the service worker registered since (newer).
// JS cannot be un-run, so the manifest's set is *held* (hold.js): its JS runs only if no newer
// set arrives before the injection is over — at the first DOM mutation, readyState change or
// task, whichever comes first; all of them come after every content script and before the
// page's first script (measured on Chromium 156). A newer set releases the hold at once.
//
// Userscripts (rules whose JS has a ==UserScript== block) run with the GM API their @grant
// lines ask for (gm.js, inserted below: one closure, so the page never reaches the channel to
// the extension). The channel: this runtime names a random event at start, before any page
// script, and the extension's isolated-world bridge takes the first name it is told.
(() => {
  "use strict";
  const KEY = "__deskpilotPages";
  if (window[KEY]) return;
  const ERROR_EVENT = "deskpilot-pages:error";
  const PANE_EVENT = "deskpilot-pages:pane";
  const isTop = (() => { try { return window.top === window; } catch (e) { return false; } })();
  const state = {
    rev: -1,
    rules: [],              // the enabled rules, in library order
    defs: new Map(),        // key -> function(dp) (one file per JS rule)
    scripts: new Map(),     // key -> {spec, params, fn} (userscripts)
    sheets: new Map(),      // key -> CSSStyleSheet
    ran: new Map(),         // key -> {cleanup} once a rule's JS has run in this document
    active: new Set(),      // keys whose CSS is adopted
    paneSheet: null,
    paneCleanup: null,
    url: "",
    listeners: [],
    errors: [],
    hold: "",               // "armed" by hold.js, "held" once the manifest's set loaded
    afterDcl: false,        // a task after DOMContentLoaded has run (userscripts' idle)
  };
  const regexes = new Map();
  const mine = new WeakSet();  // every sheet this runtime made (a page's own are left alone)
  function newSheet() { const sheet = new CSSStyleSheet(); mine.add(sheet); return sheet; }

  function href() {
    let url = location.href;
    if (!isTop && (url === "about:blank" || url === "about:srcdoc")) {
      try { url = parent.location.href; } catch (e) { /* cross-origin parent */ }
    }
    return url;
  }
  // a pattern is [regex source, flags]; flag "p": tested without the URL's ?query and #hash
  function test(pat, url) {
    const src = pat[0];
    const flags = pat[1] || "";
    const key = flags + "\n" + src;
    let re = regexes.get(key);
    if (re === undefined) {
      try { re = new RegExp(src, flags.replace("p", "")); } catch (e) { re = null; }
      regexes.set(key, re);
    }
    if (re === null) return false;
    return re.test(flags.indexOf("p") >= 0 ? url.split(/[?#]/)[0] : url);
  }
  function levelOk(level, url) {
    for (const pat of level.exc) if (test(pat, url)) return false;
    return level.inc.length === 0 || level.inc.some((pat) => test(pat, url));
  }
  function applies(rule, url) {
    if (rule.frames === "top" && !isTop) return false;
    return rule.levels.every((level) => levelOk(level, url));
  }
  function classify(err) {
    const text = String((err && err.message) || err);
    if (/Trusted ?(HTML|Script|ScriptURL|Type)/i.test(text)) return "trusted_types";
    if ((typeof EvalError !== "undefined" && err instanceof EvalError) || /unsafe-eval/.test(text)) return "csp_eval";
    return "js_exception";
  }
  function report(rule, kind, message) {
    const detail = JSON.stringify({
      rule: rule.id, url: location.href, kind, message: String(message).slice(0, 2000),
      at: new Date().toISOString(),
    });
    state.errors.push(detail);
    if (state.errors.length > 50) state.errors.shift();
    try { document.dispatchEvent(new CustomEvent(ERROR_EVENT, { detail })); } catch (e) { /* none */ }
  }
  function describe(err) {
    if (err && err.stack) {
      const m = /<anonymous>:(\d+):(\d+)|deskpilot-rule[^:]*:(\d+):(\d+)/.exec(err.stack);
      const line = m ? Number(m[1] || m[3]) - 1 : null;
      return `${err.name || "Error"}: ${err.message}` + (line ? ` (line ${line})` : "");
    }
    return String(err);
  }

  // -- CSS: one constructed sheet per rule, adopted in library order, the TEMP pane last
  function sheetFor(rule) {
    let sheet = state.sheets.get(rule.key);
    if (!sheet) {
      sheet = newSheet();
      try { sheet.replaceSync(rule.css); } catch (e) { report(rule, "css_error", describe(e)); }
      state.sheets.set(rule.key, sheet);
    }
    return sheet;
  }
  function adopt() {
    const want = [];
    for (const rule of state.rules) if (state.active.has(rule.key)) want.push(state.sheets.get(rule.key));
    if (state.paneSheet) want.push(state.paneSheet);
    try {
      const page = document.adoptedStyleSheets.filter((s) => !mine.has(s));
      document.adoptedStyleSheets = [...page, ...want];
    } catch (e) { /* a document without adoptedStyleSheets */ }
  }

  // -- JS: run once per document when the rule matches and its time has come
  function due(rule) {
    if (rule.runAt === "document-start") return true;
    const rs = document.readyState;
    if (rule.runAt === "document-body") return Boolean(document.body) || rs !== "loading";
    if (rule.runAt === "document-end") return rs !== "loading";
    // a userscript's document-idle is Violentmonkey's: soon after DOMContentLoaded
    if (rule.us && state.afterDcl) return true;
    return rs === "complete";
  }
  function run(rule) {
    if (state.hold || state.ran.has(rule.key)) return;
    if (rule.us) { gm.runScript(rule); return; }
    const fn = state.defs.get(rule.key);
    if (!fn) return;
    state.ran.set(rule.key, { cleanup: null });
    const dp = {
      rule: { id: rule.id, name: rule.name },
      get url() { return href(); },
      onUrlChange(cb) { if (typeof cb === "function") state.listeners.push(cb); },
    };
    try {
      const out = fn.call(window, dp);
      if (typeof out === "function") state.ran.get(rule.key).cleanup = out;
      if (out && typeof out.then === "function") {
        out.then(
          (v) => { if (typeof v === "function") state.ran.get(rule.key).cleanup = v; },
          (e) => report(rule, classify(e), describe(e)),
        );
      }
    } catch (e) {
      report(rule, classify(e), describe(e));
    }
  }
  function stop(key) {
    const done = state.ran.get(key);
    if (!done || !done.cleanup) return;  // without a cleanup, JS cannot be un-run
    try { done.cleanup(); } catch (e) { /* ignore */ }
    state.ran.delete(key);
  }

  function evaluate() {
    const url = href();
    state.url = url;
    const keep = new Set();
    for (const rule of state.rules) {
      const on = applies(rule, url);
      if (rule.css) {
        if (on) { sheetFor(rule); state.active.add(rule.key); } else state.active.delete(rule.key);
      }
      if (rule.hasJs) {
        if (on) { keep.add(rule.key); if (due(rule)) run(rule); } else stop(rule.key);
      }
    }
    for (const key of [...state.ran.keys()]) if (!keep.has(key) && !state.rules.some((r) => r.key === key)) stop(key);
    for (const key of [...state.active]) if (!state.rules.some((r) => r.key === key)) state.active.delete(key);
    adopt();
  }
  function urlChanged() {
    if (href() === state.url) return;
    evaluate();
    for (const cb of state.listeners) { try { cb(href()); } catch (e) { /* the rule's own */ } }
    gm.urlChanged(href());
  }
  function missing() {
    for (const rule of state.rules) {
      if (rule.hasJs && applies(rule, href()) && !state.defs.has(rule.key) && !state.scripts.has(rule.key)) {
        report(rule, "js_syntax", "the rule's JavaScript did not load (a syntax error?)");
      }
    }
  }

  // -- the hold on the manifest's set (see the top of this file)
  let unhold = null;
  function release() {
    if (!state.hold) return;
    state.hold = "";
    if (unhold) unhold();
    evaluate();
  }
  function hold() {
    if (state.rev >= 0 || state.hold) return;
    state.hold = "armed";
    const mo = new MutationObserver(release);
    mo.observe(document, { childList: true, subtree: true });
    document.addEventListener("readystatechange", release);
    const timer = setTimeout(release, 0);
    unhold = () => {
      mo.disconnect();
      document.removeEventListener("readystatechange", release);
      clearTimeout(timer);
      unhold = null;
    };
  }

  // -- userscripts: the GM API and the channel to the extension (gm.js)
  /*@GM@*/

  const api = {
    get rev() { return state.rev; },
    get held() { return Boolean(state.hold); },
    hold,
    load(rev, rules) {
      if (rev <= state.rev) return false;
      state.rev = rev;
      state.rules = rules;
      if (state.hold === "armed") state.hold = "held";  // the manifest's own set
      else if (state.hold) { state.hold = ""; if (unhold) unhold(); }  // a newer one
      evaluate();
      return true;
    },
    define(key, fn) {
      state.defs.set(key, fn);
      const rule = state.rules.find((r) => r.key === key);
      if (rule && applies(rule, href()) && due(rule)) run(rule);
    },
    defineScript(key, spec, params, fn) {
      state.scripts.set(key, { spec, params, fn });
      const rule = state.rules.find((r) => r.key === key);
      if (rule && applies(rule, href()) && due(rule)) run(rule);
    },
    applied() { return state.rules.filter((r) => state.active.has(r.key) || state.ran.has(r.key)).map((r) => r.id); },
    errors() { return state.errors.slice(); },
    // TEMP panes (top frame): the CSS pane's sheet is replaced, not appended to
    paneCss(code) {
      if (code === null) { state.paneSheet = null; adopt(); return 0; }
      if (!state.paneSheet) state.paneSheet = newSheet();
      state.paneSheet.replaceSync(code);
      adopt();
      return state.paneSheet.cssRules.length;
    },
    paneStop() {
      const cleanup = state.paneCleanup;
      state.paneCleanup = null;
      if (typeof cleanup === "function") { try { cleanup(); } catch (e) { return String(e); } }
      return null;
    },
    // run a JS pane's code (a function body, like a rule's): the last run's cleanup first
    paneRun(fn) {
      api.paneStop();
      const dp = { rule: { id: "pane", name: "TEMP pane" }, get url() { return href(); },
                   onUrlChange(cb) { if (typeof cb === "function") state.listeners.push(cb); } };
      const finish = (v) => {
        if (typeof v === "function") {
          state.paneCleanup = v;
          return { type: "cleanup", text: "a cleanup function (it runs when the pane changes or closes)" };
        }
        return summarize(v);
      };
      const out = fn.call(window, dp);
      if (out && typeof out.then === "function") return out.then(finish);
      return finish(out);
    },
  };
  function summarize(v) {
    if (v === undefined) return { type: "undefined", text: "undefined" };
    if (typeof Node !== "undefined" && v instanceof Node) {
      return { type: "node", text: String(v.outerHTML || v.nodeName).slice(0, 2000) };
    }
    try {
      const text = JSON.stringify(v);
      if (text !== undefined) return { type: typeof v, text: text.slice(0, 4000) };
    } catch (e) { /* cyclic */ }
    return { type: typeof v, text: String(v).slice(0, 4000) };
  }
  Object.defineProperty(window, KEY, { value: api, configurable: true });

  function when(event, target, fn) { target.addEventListener(event, fn, { passive: true }); }
  if (window.navigation && typeof window.navigation.addEventListener === "function") {
    window.navigation.addEventListener("currententrychange", urlChanged);
  }
  when("popstate", window, urlChanged);
  when("hashchange", window, urlChanged);
  when("DOMContentLoaded", document, () => {
    evaluate();
    missing();
    setTimeout(() => { state.afterDcl = true; evaluate(); }, 0);
  });
  when("load", window, () => {
    const later = window.requestIdleCallback || ((f) => setTimeout(f, 1));
    later(() => evaluate());
  });
  if (!document.body && document.readyState === "loading") {
    // document-body scripts: as soon as <body> exists
    const bodyWatch = new MutationObserver(() => {
      if (!document.body) return;
      bodyWatch.disconnect();
      if (state.rules.some((r) => r.runAt === "document-body")) evaluate();
    });
    bodyWatch.observe(document, { childList: true, subtree: true });
  }
  // a TEMP pane re-applied after a reload (sent by deskpilot's isolated-world bridge)
  when(PANE_EVENT, document, (e) => {
    try {
      const pane = JSON.parse(e.detail);
      if (pane.kind === "css" && typeof pane.code === "string") api.paneCss(pane.code);
    } catch (err) { /* malformed */ }
  });
})();
