  // ---- gm.js (inserted into runtime.js; shares its closure) --------------------------------
  // The GM_* / GM.* API of userscripts, as Violentmonkey and Tampermonkey document it, each
  // function present only when the script's @grant asks for it (GM_info always). Requests,
  // values, menus, notifications, tabs and the clipboard go through the extension: this
  // world names a random channel before any page script runs, and the isolated-world bridge
  // (bridge.js) takes the first name it hears.
  const gm = (() => {
    const CH = "deskpilot-pages:" + Math.random().toString(36).slice(2) +
      Date.now().toString(36);
    const dispatch = EventTarget.prototype.dispatchEvent;
    const listen = EventTarget.prototype.addEventListener;
    const SafeCustomEvent = CustomEvent;
    const SafeMouseEvent = MouseEvent;
    const { parse, stringify } = JSON;
    const SafePromise = Promise;
    const safeLog = console.log.bind(console);
    const pending = new Map();  // request id -> handler(reply): true to keep listening
    const values = new Map();   // rule id -> Map(key -> JSON text)
    const loading = new Map();  // rule id -> Promise
    const changeHooks = new Map();  // rule id -> Map(key -> Map(listener id -> fn))
    const commands = new Map(); // rule id -> Map(key -> {cb, caption})
    const notes = new Map();    // notification id -> {onclick, ondone, resolve}
    const tabs = new Map();     // tab id -> control of GM_openInTab
    const apis = new Map();     // rule key -> the API object
    const urlHooks = [];
    let seq = 0;
    let lastNode = null;
    let connected = false;

    function connect() {
      if (connected) return;
      connected = true;
      listen.call(document, CH + ":out", (e) => {
        let msg;
        try { msg = parse(e.detail); } catch (err) { return; }
        if (msg && msg.id !== undefined) {
          const handler = pending.get(msg.id);
          if (handler && !handler(msg)) pending.delete(msg.id);
        } else if (msg) {
          unsolicited(msg);
        }
      });
      listen.call(document, CH + ":node", (e) => { lastNode = e.relatedTarget; });
      dispatch.call(document, new SafeCustomEvent("deskpilot-pages:connect", { detail: CH }));
    }
    function post(msg, handler) {
      connect();
      const id = ++seq;
      if (handler) pending.set(id, handler);
      dispatch.call(document, new SafeCustomEvent(CH + ":in", { detail: stringify({ ...msg, id }) }));
      return id;
    }
    function call(msg) {
      return new SafePromise((resolve, reject) => {
        post(msg, (reply) => {
          if (reply.error !== undefined) reject(new Error(String(reply.error)));
          else resolve(reply);
          return false;
        });
      });
    }
    function unsolicited(msg) {
      switch (msg.op) {
        case "values-changed": remoteChange(msg.rule, msg.changes || {}); break;
        case "menu-run": {
          const cmd = (commands.get(msg.rule) || new Map()).get(msg.key);
          if (cmd) { try { cmd.cb.call(window, { type: "menu", key: msg.key }); } catch (e) { reportFor(msg.rule, e); } }
          break;
        }
        case "notification": {
          const n = notes.get(msg.nid);
          if (!n) break;
          if (msg.event === "click" && typeof n.onclick === "function") {
            try { n.onclick.call(null, { id: msg.nid }); } catch (e) { reportFor(n.rule, e); }
            n.clicked = true;
          }
          if (msg.event === "close") {
            notes.delete(msg.nid);
            if (typeof n.ondone === "function") { try { n.ondone.call(null, n.clicked === true); } catch (e) { reportFor(n.rule, e); } }
            if (n.resolve) n.resolve(n.clicked === true);
          }
          break;
        }
        case "tab-closed": {
          const control = tabs.get(msg.tab);
          if (!control) break;
          tabs.delete(msg.tab);
          control.closed = true;
          if (typeof control.onclose === "function") { try { control.onclose(); } catch (e) { /* the script's own */ } }
          break;
        }
        default:
      }
    }
    function reportFor(ruleId, err) {
      const rule = state.rules.find((r) => r.id === ruleId);
      if (rule) report(rule, classify(err), describe(err));
    }

    // -- values: loaded once per document before the script runs, written through at once
    function loadValues(rule) {
      if (!loading.has(rule.id)) {
        loading.set(rule.id, call({ op: "values-get", rule: rule.id, epoch: rule.us.epoch || 0 })
          .then((reply) => {
            const store = new Map();
            const data = reply.data || {};
            for (const k of Object.keys(data)) store.set(k, stringify(data[k]));
            values.set(rule.id, store);
          }));
      }
      return loading.get(rule.id);
    }
    function decode(text) { return text === undefined ? undefined : parse(text); }
    function notify(ruleId, key, oldText, newText, remote) {
      const hooks = (changeHooks.get(ruleId) || new Map()).get(key);
      if (!hooks) return;
      for (const fn of [...hooks.values()]) {
        try { fn(key, decode(oldText), decode(newText), remote); } catch (e) { reportFor(ruleId, e); }
      }
    }
    function writeValues(ruleId, entries) {
      const store = values.get(ruleId) || new Map();
      values.set(ruleId, store);
      const changes = {};
      let any = false;
      for (const [key, value] of entries) {
        const k = String(key);
        const text = value === undefined ? undefined : stringify(value);
        const old = store.get(k);
        if (text === undefined) store.delete(k); else store.set(k, text);
        if (text !== old) {
          changes[k] = text === undefined ? null : parse(text);
          any = true;
          notify(ruleId, k, old, text, false);
        }
      }
      if (!any) return SafePromise.resolve();
      return call({ op: "values-set", rule: ruleId, changes });
    }
    function remoteChange(ruleId, changes) {
      const store = values.get(ruleId);
      if (!store) return;
      for (const k of Object.keys(changes)) {
        const text = changes[k] === null || changes[k] === undefined ? undefined : stringify(changes[k]);
        const old = store.get(k);
        if (text === old) continue;
        if (text === undefined) store.delete(k); else store.set(k, text);
        notify(ruleId, k, old, text, true);
      }
    }

    // -- resources bundled into the script's file (base64)
    function bytesOf(b64) {
      const bin = atob(b64);
      const out = new Uint8Array(bin.length);
      for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
      return out;
    }
    function charsetOf(mime) {
      const m = /charset=([\w-]+)/i.exec(mime || "");
      return m ? m[1] : "utf-8";
    }
    function resourceText(res) {
      try { return new TextDecoder(charsetOf(res.mime)).decode(bytesOf(res.b64)); }
      catch (e) { return new TextDecoder().decode(bytesOf(res.b64)); }
    }
    function resourceUrl(res, blob) {
      if (res.url.startsWith("data:") && blob !== true) return res.url;
      if (blob === false) return `data:${res.mime || "application/octet-stream"};base64,${res.b64}`;
      if (!res.blobUrl) res.blobUrl = URL.createObjectURL(new Blob([bytesOf(res.b64)], { type: res.mime || "" }));
      return res.blobUrl;
    }

    // -- elements made in the extension's world (the page's CSP does not stop them)
    function addElement(parent, tag, attrs) {
      if (typeof parent === "string") { attrs = tag; tag = parent; parent = null; }
      if (parent) dispatch.call(document, new SafeMouseEvent(CH + ":nodein", { relatedTarget: parent }));
      lastNode = null;
      let error = null;
      const flat = {};
      for (const k of Object.keys(attrs || {})) {
        const v = attrs[k];
        flat[k] = typeof v === "string" || typeof v === "number" || typeof v === "boolean" ? String(v) : stringify(v);
      }
      post({ op: "add-element", tag: String(tag), attrs: flat, parent: Boolean(parent) }, (reply) => {
        if (reply.error !== undefined) error = reply.error;
        return false;
      });
      if (error !== null) throw new Error(`GM_addElement: ${error}`);
      const el = lastNode;
      if (el) {
        // Tampermonkey's and old Violentmonkey's GM_addStyle returned a thenable
        Object.defineProperty(el, "then", {
          configurable: true,
          value(cb) { delete el.then; return SafePromise.resolve(typeof cb === "function" ? cb(el) : el); },
        });
      }
      return el;
    }

    // -- GM_xmlhttpRequest / GM_download: the request is made by the extension
    function toB64(bytes) {
      let bin = "";
      for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
      return btoa(bin);
    }
    async function bodyOf(data, binary) {
      if (data === undefined || data === null) return null;
      if (typeof data === "string") {
        if (!binary) return { text: data };
        const bytes = new Uint8Array(data.length);
        for (let i = 0; i < data.length; i++) bytes[i] = data.charCodeAt(i) & 0xff;
        return { b64: toB64(bytes) };
      }
      if (data instanceof URLSearchParams) return { text: data.toString(), type: "application/x-www-form-urlencoded;charset=UTF-8" };
      if (data instanceof Blob) return { b64: toB64(new Uint8Array(await data.arrayBuffer())), type: data.type };
      if (data instanceof ArrayBuffer) return { b64: toB64(new Uint8Array(data)) };
      if (ArrayBuffer.isView(data)) return { b64: toB64(new Uint8Array(data.buffer, data.byteOffset, data.byteLength)) };
      if (data instanceof FormData) {
        const parts = [];
        for (const [name, value] of data.entries()) {
          if (typeof value === "string") parts.push({ name, text: value });
          else parts.push({ name, b64: toB64(new Uint8Array(await value.arrayBuffer())), type: value.type, filename: value.name });
        }
        return { form: parts };
      }
      return { text: stringify(data), type: "application/json" };
    }
    function headersText(list) { return (list || []).map(([k, v]) => `${k}: ${v}`).join("\r\n"); }
    function makeResponse(details, r) {
      const type = (details.responseType || "").toLowerCase();
      let textCache, bytesCache, responseCache, done = false;
      const bytes = () => (bytesCache = bytesCache || (r.b64 ? bytesOf(r.b64) : new Uint8Array(0)));
      const mime = () => details.overrideMimeType || r.contentType || "";
      const text = () => {
        if (textCache === undefined) {
          try { textCache = new TextDecoder(charsetOf(mime())).decode(bytes()); }
          catch (e) { textCache = new TextDecoder().decode(bytes()); }
        }
        return textCache;
      };
      const resp = {
        readyState: r.readyState || 0,
        status: r.status || 0,
        statusText: r.statusText || "",
        responseHeaders: headersText(r.headers),
        finalUrl: r.finalUrl || details.url,
        context: details.context,
        lengthComputable: Boolean(r.total),
        loaded: r.loaded || 0,
        total: r.total || 0,
        error: r.error,
        get responseText() { return r.b64 === undefined ? "" : text(); },
        get response() {
          if (r.b64 === undefined) return type === "" || type === "text" ? "" : null;
          if (done) return responseCache;
          done = true;
          if (type === "json") { try { responseCache = parse(text()); } catch (e) { responseCache = null; } }
          else if (type === "arraybuffer") responseCache = bytes().slice().buffer;
          else if (type === "blob") responseCache = new Blob([bytes()], { type: mime() });
          else if (type === "document") responseCache = resp.responseXML;
          else if (type === "stream") responseCache = new Blob([bytes()]).stream();
          else responseCache = text();
          return responseCache;
        },
        get responseXML() {
          if (r.b64 === undefined) return null;
          const m = mime().split(";")[0] || "text/html";
          const kind = /xml/.test(m) ? (m === "application/xhtml+xml" ? m : "text/xml") : "text/html";
          try { return new DOMParser().parseFromString(text(), kind); } catch (e) { return null; }
        },
      };
      return resp;
    }
    function request(rule, details, asPromise) {
      details = Object.assign({}, details || {});
      let rid = null;
      let aborted = false;
      let settle = null;
      const control = {
        abort() {
          aborted = true;
          if (rid !== null) post({ op: "xhr-abort", req: rid });
          else fire("abort", { readyState: 4, status: 0, error: "aborted" });
        },
      };
      function fire(event, r) {
        const resp = makeResponse(details, r);
        const fn = details["on" + event];
        if (typeof fn === "function") { try { fn.call(resp, resp); } catch (e) { reportFor(rule.id, e); } }
        if (settle && (event === "load" || event === "error" || event === "timeout" || event === "abort")) {
          settle(event, resp);
          settle = null;
        }
      }
      const promise = asPromise ? new SafePromise((resolve, reject) => {
        settle = (event, resp) => (event === "load" ? resolve(resp) : reject(resp));
      }) : null;
      let url = details.url;
      try { url = new URL(url instanceof URL ? url.href : String(url), location.href).href; } catch (e) { /* the extension says why */ }
      bodyOf(details.data, details.binary).then((body) => {
        if (aborted) { fire("abort", { readyState: 4, status: 0, error: "aborted" }); return; }
        const headers = {};
        for (const k of Object.keys(details.headers || {})) headers[k] = String(details.headers[k]);
        rid = post({
          op: "xhr", rule: rule.id, url, method: String(details.method || "GET").toUpperCase(),
          headers, body, timeout: Number(details.timeout) || 0, anonymous: Boolean(details.anonymous),
          user: details.user, password: details.password, redirect: details.redirect || "follow",
          nocache: Boolean(details.nocache), progress: typeof details.onprogress === "function",
        }, (reply) => {
          if (reply.event) fire(reply.event, reply.r || {});
          if (reply.error !== undefined && !reply.event) {
            fire("error", { readyState: 4, status: 0, error: reply.error, finalUrl: url });
            fire("loadend", { readyState: 4, status: 0, error: reply.error, finalUrl: url });
            return false;
          }
          return reply.event !== "loadend";
        });
      }, (err) => fire("error", { readyState: 4, status: 0, error: String(err) }));
      if (promise) { promise.abort = control.abort; return promise; }
      return control;
    }
    function download(rule, details, name) {
      if (typeof details === "string") details = { url: details, name };
      details = Object.assign({}, details || {});
      if (!details.name) throw new Error('GM_download: the "name" of the file is required');
      let url = details.url;
      try { url = new URL(String(url), location.href).href; } catch (e) { /* said by the extension */ }
      let settle = null;
      const promise = new SafePromise((resolve, reject) => { settle = { resolve, reject }; });
      const id = post({
        op: "download", rule: rule.id, url, name: String(details.name), saveAs: Boolean(details.saveAs),
        conflictAction: details.conflictAction, headers: details.headers || {},
      }, (reply) => {
        const fn = details["on" + (reply.event || "error")];
        const arg = reply.event === "load" ? { url, name: details.name } : { error: reply.error || "failed", details: reply.details };
        if (typeof fn === "function") { try { fn(arg); } catch (e) { reportFor(rule.id, e); } }
        if (reply.event === "load") settle.resolve(arg);
        else if (reply.event !== "progress") settle.reject(arg);
        return reply.event === "progress";
      });
      const control = { abort() { post({ op: "download-abort", req: id }); } };
      promise.abort = control.abort;
      return { control, promise };
    }

    // -- the API of one script
    function notification(rule, a, b, c, d) {
      let opts;
      if (a && typeof a === "object") { opts = Object.assign({}, a); if (typeof b === "function") opts.ondone = b; }
      else opts = { text: a, title: b, image: c, onclick: d };
      if (!opts.text && !opts.title && !opts.highlight) throw new Error("GM_notification: the notification's text is required");
      const nid = `${CH.slice(-8)}-${++seq}`;
      let resolve = null;
      const promise = new SafePromise((r) => { resolve = r; });
      notes.set(nid, { onclick: opts.onclick, ondone: opts.ondone, resolve, rule: rule.id });
      post({
        op: "notify", nid, rule: rule.id, text: String(opts.text || ""), title: String(opts.title || rule.name),
        image: opts.image ? String(opts.image) : "", silent: Boolean(opts.silent), tag: opts.tag ? String(opts.tag) : "",
        timeout: Number(opts.timeout) || 0, highlight: Boolean(opts.highlight), url: opts.url ? String(opts.url) : "",
        hasClick: typeof opts.onclick === "function",
      });
      const control = { remove() { post({ op: "notify-remove", nid }); return SafePromise.resolve(); } };
      return { control, promise };
    }
    function openInTab(rule, url, options) {
      const opts = options && typeof options === "object" ? options : { active: !options };
      let full = String(url);
      try { full = new URL(full, location.href).href; } catch (e) { /* the extension says */ }
      const control = { closed: false, onclose: null, close() { post({ op: "close-tab", tab: control.tab }); } };
      call({
        op: "open-tab", url: full, active: opts.active !== undefined ? Boolean(opts.active) : !opts.loadInBackground,
        insert: opts.insert !== false, setParent: Boolean(opts.setParent), pinned: Boolean(opts.pinned),
      }).then((reply) => { control.tab = reply.tab; tabs.set(reply.tab, control); },
        (err) => reportFor(rule.id, err));
      return control;
    }
    function info(rule, spec) {
      const nav = navigator;
      return {
        script: spec.info.script,
        scriptMetaStr: spec.info.metaStr,
        scriptHandler: "deskpilot",
        version: spec.info.handlerVersion,
        uuid: rule.id,
        injectInto: "page",
        isIncognito: false,
        scriptWillUpdate: false,
        userAgent: nav.userAgent,
        platform: { os: "linux", arch: /x86_64|x64|amd64/i.test(nav.userAgent) ? "x86-64" : "arm", browserName: "chrome" },
      };
    }
    function makeApi(rule, spec) {
      const granted = new Set(spec.grants);
      const g = (name) => granted.has(name);
      const id = rule.id;
      const store = () => values.get(id) || new Map();
      const full = {
        GM_info: info(rule, spec),
        GM_log: safeLog,
        GM_getValue(key, def) { const t = store().get(String(key)); return t === undefined ? def : parse(t); },
        GM_setValue(key, value) { writeValues(id, [[key, value]]); },
        GM_deleteValue(key) { writeValues(id, [[key, undefined]]); },
        GM_listValues() { return [...store().keys()]; },
        GM_getValues(what) {
          const out = {};
          const keys = Array.isArray(what) ? what : Object.keys(what || {});
          for (const k of keys) {
            const t = store().get(String(k));
            if (t !== undefined) out[k] = parse(t);
            else if (!Array.isArray(what)) out[k] = what[k];
          }
          return out;
        },
        GM_setValues(obj) { writeValues(id, Object.keys(obj || {}).map((k) => [k, obj[k]])); },
        GM_deleteValues(keys) { writeValues(id, (keys || []).map((k) => [k, undefined])); },
        GM_addValueChangeListener(key, fn) {
          if (typeof fn !== "function") return undefined;
          const byKey = changeHooks.get(id) || new Map();
          changeHooks.set(id, byKey);
          const hooks = byKey.get(String(key)) || new Map();
          byKey.set(String(key), hooks);
          const lid = `VMvc${++seq}`;
          hooks.set(lid, fn);
          return lid;
        },
        GM_removeValueChangeListener(lid) {
          for (const hooks of (changeHooks.get(id) || new Map()).values()) hooks.delete(lid);
        },
        GM_getResourceText(name) { const r = spec.resources[name]; return r ? resourceText(r) : undefined; },
        GM_getResourceURL(name, isBlobUrl) { const r = spec.resources[name]; return r ? resourceUrl(r, isBlobUrl) : undefined; },
        GM_addElement: addElement,
        GM_addStyle(css) { return addElement(null, "style", { textContent: String(css) }); },
        GM_openInTab(url, options) { return openInTab(rule, url, options); },
        GM_registerMenuCommand(caption, cb, options) {
          const opts = options && typeof options === "object" ? options : { accessKey: options };
          const text = String(caption || "");
          if (!text) throw new Error("GM_registerMenuCommand: the menu caption is required");
          const key = opts.id !== undefined ? String(opts.id) : text;
          const byRule = commands.get(id) || new Map();
          commands.set(id, byRule);
          byRule.set(key, { cb, caption: text });
          post({ op: "menu-set", rule: id, key, caption: text, title: opts.title ? String(opts.title) : "",
                 accessKey: opts.accessKey ? String(opts.accessKey) : "", autoClose: opts.autoClose !== false });
          return key;
        },
        GM_unregisterMenuCommand(key) {
          const byRule = commands.get(id);
          if (!byRule) return;
          let k = String(key);
          if (!byRule.has(k)) k = [...byRule.keys()].find((x) => byRule.get(x).caption === k);
          if (k === undefined) return;
          byRule.delete(k);
          post({ op: "menu-remove", rule: id, key: k });
        },
        GM_notification(a, b, c, d) { return notification(rule, a, b, c, d).control; },
        GM_setClipboard(data, type) {
          const mime = type && typeof type === "object" ? (type.mimetype || type.type) : type;
          post({ op: "clipboard", data: String(data), type: mime ? String(mime) : "text" });
        },
        GM_xmlhttpRequest(details) { return request(rule, details, false); },
        GM_download(details, name) { return download(rule, details, name).control; },
        GM_getTab(cb) { call({ op: "tab-get", rule: id }).then((r) => cb && cb(r.data || {})); },
        GM_saveTab(obj) { post({ op: "tab-save", rule: id, data: obj === undefined ? {} : parse(stringify(obj)) }); },
        GM_getTabs(cb) { call({ op: "tabs-get", rule: id }).then((r) => cb && cb(r.data || {})); },
      };
      const async = {
        getValue: (k, d) => SafePromise.resolve(full.GM_getValue(k, d)),
        setValue: (k, v) => writeValues(id, [[k, v]]).then(() => undefined),
        deleteValue: (k) => writeValues(id, [[k, undefined]]).then(() => undefined),
        listValues: () => SafePromise.resolve(full.GM_listValues()),
        getValues: (w) => SafePromise.resolve(full.GM_getValues(w)),
        setValues: (o) => writeValues(id, Object.keys(o || {}).map((k) => [k, o[k]])).then(() => undefined),
        deleteValues: (ks) => writeValues(id, (ks || []).map((k) => [k, undefined])).then(() => undefined),
        getResourceUrl: (n, b) => SafePromise.resolve(full.GM_getResourceURL(n, b)),
        getResourceURL: (n, b) => SafePromise.resolve(full.GM_getResourceURL(n, b)),
        getResourceText: (n) => SafePromise.resolve(full.GM_getResourceText(n)),
        xmlHttpRequest: (d) => request(rule, d, true),
        notification: (a, b, c, d) => notification(rule, a, b, c, d).promise,
        setClipboard: (data, type) => SafePromise.resolve(full.GM_setClipboard(data, type)),
        download: (d, n) => download(rule, d, n).promise,
        getTab: () => call({ op: "tab-get", rule: id }).then((r) => r.data || {}),
        getTabs: () => call({ op: "tabs-get", rule: id }).then((r) => r.data || {}),
        saveTab: (o) => SafePromise.resolve(full.GM_saveTab(o)),
      };
      const out = { GM_info: full.GM_info, unsafeWindow: window, GM: { info: full.GM_info } };
      if (spec.none) return out;
      for (const name of granted) {
        if (name in full) out[name] = full[name];
        if (name.startsWith("GM.")) {
          const short = name.slice(3);
          const twin = spec.gm4[short];
          if (short in async) out.GM[short] = async[short];
          else if (twin && twin in full) out.GM[short] = full[twin];
        }
      }
      out.GM_info = full.GM_info;
      if (g("window.close") || g("window.focus")) {
        const own = {};
        if (g("window.close")) own.close = () => post({ op: "close-tab", tab: "self" });
        if (g("window.focus")) own.focus = () => post({ op: "focus-tab" });
        Object.assign(out, own);
        out.window = windowWith(own);
      }
      if (g("window.onurlchange")) {
        if (!("onurlchange" in window)) window.onurlchange = null;
        urlHooks.push(true);
      }
      return out;
    }
    function windowWith(own) {
      const bound = new Map();
      return new Proxy(window, {
        get(target, key) {
          if (Object.prototype.hasOwnProperty.call(own, key)) return own[key];
          const v = Reflect.get(target, key);
          if (typeof v !== "function" || typeof key !== "string" || /^[A-Z]/.test(key)) return v;
          if (!bound.has(v)) bound.set(v, v.bind(target));
          return bound.get(v);
        },
        set(target, key, value) { return Reflect.set(target, key, value); },
      });
    }

    function runScript(rule) {
      const def = state.scripts.get(rule.key);
      if (!def) return;
      const spec = def.spec;
      if (spec.values && !values.has(rule.id)) {
        loadValues(rule).then(() => {
          if (applies(rule, href()) && due(rule)) run(rule);
        }, (err) => report(rule, "js_exception", `the script's values could not be read: ${err.message || err}`));
        return;
      }
      state.ran.set(rule.key, { cleanup: null });
      if (spec.unwrap) {
        call({ op: "unwrap", file: spec.file }).catch((err) => report(rule, "js_exception", String(err.message || err)));
        return;
      }
      let api = apis.get(rule.key);
      if (!api) { api = makeApi(rule, spec); apis.set(rule.key, api); }
      const late = lateStart(rule);
      try {
        const out = def.fn.apply(window, def.params.map((name) => api[name]));
        if (out && typeof out.then === "function") out.then(null, (e) => report(rule, classify(e), describe(e)));
      } catch (e) {
        report(rule, classify(e), describe(e));
      } finally {
        if (late) late();
      }
    }
    // A document-start script that had to wait for its values may run after DOMContentLoaded
    // (or load): the listeners it adds for those while it runs are called as if it had been on
    // time (once, soon), besides being added.
    function lateStart(rule) {
      if (rule.runAt !== "document-start" && rule.runAt !== "document-body") return null;
      const rs = document.readyState;
      if (rs === "loading") return null;
      const past = { DOMContentLoaded: true, readystatechange: rs === "complete", load: rs === "complete" };
      const patched = [];
      for (const target of [document, window]) {
        const own = Object.prototype.hasOwnProperty.call(target, "addEventListener");
        const original = target.addEventListener;
        const replay = function (type, listener, options) {
          original.call(this, type, listener, options);
          if (!past[type] || (type === "load" && target !== window)) return;
          if (type === "DOMContentLoaded" && target !== document && target !== window) return;
          setTimeout(() => {
            const ev = new Event(type);
            try {
              if (typeof listener === "function") listener.call(target, ev);
              else if (listener && typeof listener.handleEvent === "function") listener.handleEvent(ev);
            } catch (e) { report(rule, classify(e), describe(e)); }
          }, 0);
        };
        Object.defineProperty(target, "addEventListener", { value: replay, configurable: true, writable: true });
        patched.push(() => {
          if (own) Object.defineProperty(target, "addEventListener", { value: original, configurable: true, writable: true });
          else delete target.addEventListener;
        });
      }
      return () => patched.forEach((undo) => undo());
    }
    function urlChanged(url) {
      if (!urlHooks.length) return;
      const ev = new Event("urlchange");
      ev.url = url;
      window.dispatchEvent(ev);
      if (typeof window.onurlchange === "function") { try { window.onurlchange(ev); } catch (e) { /* the script's */ } }
    }
    connect();
    return { runScript, urlChanged };
  })();
