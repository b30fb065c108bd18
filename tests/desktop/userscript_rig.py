"""What the userscript tests add to the pages rig: a second HTTP server on another host and
port (``localhost``, while pages come from ``127.0.0.1``) that scripts request across origins,
userscripts written as published ones are, and the X clipboard read the way any X client
reads it (a channel the page and the extension do not use)."""

from __future__ import annotations

import contextlib
import json
import select
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

LIB_URL = "https://cdn.example.test/tinylib@1.0.0/dist/tinylib.min.js"
LIB_CODE = (
    "/*! tinylib 1.0.0 */\n"
    "var TinyLib = { version: '1.0.0', twice: function (x) { return 2 * x; } };\n"
)
BANNER_URL = "https://cdn.example.test/assets/banner.txt"
BANNER = "Hello from the banner — ünïcode ✓\n"


class Api:
    """A JSON API on ``localhost`` (another origin than the pages): every request kept."""

    def __init__(self) -> None:
        api = self
        self.requests: list[dict[str, Any]] = []

        class Handler(BaseHTTPRequestHandler):
            def _answer(self, body: bytes) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                sent = self.rfile.read(length).decode() if length else ""
                api.requests.append(
                    {
                        "method": self.command,
                        "path": self.path,
                        "body": sent,
                        "headers": dict(self.headers),
                    }
                )
                if self.path.startswith("/api/redirect"):
                    self.send_response(302)
                    # another host (127.0.0.1 is not localhost): not in the script's @connect
                    self.send_header("Location", f"http://127.0.0.1:{api.port}/api/elsewhere")
                    self.end_headers()
                    return
                self.send_response(200)
                self.send_header("Content-Type", "application/json; charset=utf-8")
                self.send_header("X-Api", "deskpilot-test")
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                self._answer(json.dumps({"greeting": "hi", "path": self.path}).encode())

            def do_POST(self) -> None:
                self._answer(json.dumps({"echo": True}).encode())

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def url(self, path: str) -> str:
        return f"http://localhost:{self.port}{path}"

    def paths(self) -> list[str]:
        return [r["path"] for r in self.requests]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@contextlib.contextmanager
def api_server() -> Iterator[Api]:
    api = Api()
    try:
        yield api
    finally:
        api.close()


def companion(api_port: int) -> str:
    """A userscript as published ones are: an IIFE using most of the GM API."""
    return f"""// ==UserScript==
// @name         Page Companion
// @namespace    https://github.com/example/page-companion
// @version      2.3.1
// @description  Counts visits, greets from the API and offers menu commands
// @author       Example Author
// @match        http://127.0.0.1/*
// @exclude-match http://127.0.0.1/spa*
// @require      {LIB_URL}
// @resource     banner {BANNER_URL}
// @resource     dot data:image/png;base64,iVBORw0KGgo=
// @grant        GM_getValue
// @grant        GM_setValue
// @grant        GM_deleteValue
// @grant        GM_listValues
// @grant        GM_addValueChangeListener
// @grant        GM_xmlhttpRequest
// @grant        GM.xmlHttpRequest
// @grant        GM.getValue
// @grant        GM.setValue
// @grant        GM_addStyle
// @grant        GM_registerMenuCommand
// @grant        GM_unregisterMenuCommand
// @grant        GM_notification
// @grant        GM_setClipboard
// @grant        GM_getResourceText
// @grant        GM_getResourceURL
// @grant        GM_openInTab
// @grant        GM_info
// @grant        unsafeWindow
// @connect      localhost
// @run-at       document-end
// @noframes
// ==/UserScript==

(function () {{
    'use strict';

    const out = (unsafeWindow.__companion = unsafeWindow.__companion || {{}});
    const visits = GM_getValue('visits', 0) + 1;
    GM_setValue('visits', visits);
    GM_setValue('last', {{ url: location.href, at: visits }});
    GM_deleteValue('obsolete');
    out.visits = visits;
    out.keys = GM_listValues().sort();
    out.lib = TinyLib.version + '/' + TinyLib.twice(21);
    out.banner = GM_getResourceText('banner');
    out.bannerUrl = GM_getResourceURL('banner');
    out.dotUrl = GM_getResourceURL('dot', false);
    out.info = {{
        name: GM_info.script.name, version: GM_info.script.version,
        handler: GM_info.scriptHandler, matches: GM_info.script.matches,
        meta: GM_info.scriptMetaStr.includes('@connect      localhost'),
    }};
    out.hasDownload = typeof GM_download;
    const style = GM_addStyle('.target {{ color: rgb(0, 128, 0) !important; }}');
    out.styleTag = style && style.tagName;
    GM_addValueChangeListener('note', function (key, oldValue, newValue, remote) {{
        out.changed = {{ key, oldValue, newValue, remote }};
    }});
    GM.getValue('visits').then(function (v) {{ out.asyncVisits = v; }});
    GM.setValue('asyncKey', 'set-async').then(function () {{ out.asyncSet = true; }});

    GM_xmlhttpRequest({{
        method: 'GET',
        url: 'http://localhost:{api_port}/api/greeting?from=companion',
        responseType: 'json',
        headers: {{ 'X-Requested-By': 'companion' }},
        onload: function (r) {{
            out.xhr = {{ status: r.status, body: r.response, finalUrl: r.finalUrl,
                        api: /x-api: deskpilot-test/i.test(r.responseHeaders) }};
        }},
        onerror: function (r) {{ out.xhrError = r.error || 'error'; }},
    }});
    GM.xmlHttpRequest({{
        method: 'POST',
        url: 'http://localhost:{api_port}/api/echo',
        data: JSON.stringify({{ visits: visits }}),
        headers: {{ 'Content-Type': 'application/json' }},
    }}).then(
        function (r) {{ out.post = r.responseText; }},
        function (r) {{ out.postError = r.error; }},
    );
    GM_xmlhttpRequest({{
        url: 'http://localhost:{api_port}/api/redirect',
        onload: function (r) {{ out.redirect = 'loaded ' + r.status; }},
        onerror: function (r) {{ out.redirect = r.error; }},
    }});

    let note = null;
    GM_registerMenuCommand('Mark the page', function () {{
        document.body.dataset.marked = 'yes';
    }});
    GM_registerMenuCommand('Copy the title', function () {{
        GM_setClipboard('companion: ' + document.title, 'text');
        document.body.dataset.copied = 'yes';
    }});
    GM_registerMenuCommand('Dismiss the notification', function () {{ if (note) note.remove(); }});
    const gone = GM_registerMenuCommand('Never shown', function () {{}});
    GM_unregisterMenuCommand(gone);
    GM_registerMenuCommand('Open the other page', function () {{
        out.opened = GM_openInTab(location.origin + '/other?opened', {{ active: false }});
        out.opened.onclose = function () {{ out.openedClosed = true; }};
    }});
    note = GM_notification({{
        title: 'Page Companion',
        text: 'Visit ' + visits,
        onclick: function () {{ out.clicked = true; }},
        ondone: function () {{ out.notificationDone = true; }},
    }});
    out.ready = true;
}})();
"""


def stranger(api_port: int) -> str:
    """A script that requests the API but lists no @connect for it."""
    return f"""// ==UserScript==
// @name         Stranger
// @namespace    https://example.org/stranger
// @version      1.0
// @match        http://127.0.0.1/*
// @grant        GM_xmlhttpRequest
// @connect      example.org
// @run-at       document-idle
// ==/UserScript==
GM_xmlhttpRequest({{
    url: 'http://localhost:{api_port}/api/secret?from=stranger',
    onload: function (r) {{ window.__stranger = 'loaded ' + r.status; }},
    onerror: function (r) {{ window.__stranger = 'refused: ' + r.error; }},
}});
"""


PLAIN = """// ==UserScript==
// @name         Plain
// @namespace    https://example.org/plain
// @match        http://127.0.0.1/*
// @grant        none
// @run-at       document-start
// ==/UserScript==
window.__plain = {
    xhr: typeof GM_xmlhttpRequest, setValue: typeof GM_setValue, name: GM_info.script.name,
    gmInfo: GM.info.script.version === '' ? 'no version' : 'version', runAt: document.readyState,
};
"""


def read_clipboard(display_name: str, timeout: float = 10.0) -> str | None:
    """The CLIPBOARD selection's text, asked for as any X client asks (UTF8_STRING)."""
    from Xlib import X, display

    d = display.Display(display_name)
    try:
        win = d.screen().root.create_window(0, 0, 1, 1, 0, X.CopyFromParent)
        clip, utf8 = d.intern_atom("CLIPBOARD"), d.intern_atom("UTF8_STRING")
        prop = d.intern_atom("DESKPILOT_TEST_CLIP")
        win.convert_selection(clip, utf8, prop, X.CurrentTime)
        d.flush()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not d.pending_events():
                select.select([d.fileno()], [], [], 0.1)  # wait for the owner's answer
                continue
            event = d.next_event()
            if event.type != X.SelectionNotify:
                continue
            if event.property == X.NONE:
                return None
            got = win.get_full_property(prop, X.AnyPropertyType)
            return bytes(got.value).decode("utf-8") if got is not None else None
        return None
    finally:
        d.close()


def kitchen_sink(api_port: int) -> str:
    """The rest of the GM API, at document start."""
    return f"""// ==UserScript==
// @name         Kitchen Sink
// @namespace    https://example.org/sink
// @version      0.9
// @match        http://127.0.0.1/*
// @exclude      *?nosink*
// @grant        GM_download
// @grant        GM_getTab
// @grant        GM_saveTab
// @grant        GM_getTabs
// @grant        GM_addElement
// @grant        GM_getValues
// @grant        GM_setValues
// @grant        GM_deleteValues
// @grant        GM_addValueChangeListener
// @grant        GM_removeValueChangeListener
// @grant        GM_log
// @grant        GM.notification
// @grant        window.onurlchange
// @connect      localhost
// @run-at       document-start
// ==/UserScript==
const sink = (window.__sink = {{}});
GM_setValues({{ a: 1, b: {{ c: 2 }}, d: 'x' }});
sink.values = GM_getValues(['a', 'b', 'zz']);
sink.defaults = GM_getValues({{ a: 0, zz: 'default' }});
GM_deleteValues(['d']);
const id = GM_addValueChangeListener('a', function () {{ sink.removedListenerFired = true; }});
GM_removeValueChangeListener(id);
GM_setValues({{ a: 2 }});
GM_log('kitchen sink says hi');
GM_saveTab({{ seen: location.pathname }});
GM_getTab(function (t) {{
    sink.tab = t;
    GM_getTabs(function (all) {{ sink.tabs = Object.keys(all).length; }});
}});
document.addEventListener('DOMContentLoaded', function () {{
    const el = GM_addElement(document.body, 'div', {{ id: 'sink-el', textContent: 'added' }});
    sink.el = Boolean(el) && el.parentNode === document.body && el.textContent === 'added';
}});
if (window.onurlchange === null) {{
    window.addEventListener('urlchange', function (info) {{ sink.urlchange = info.url; }});
}}
GM_download({{
    url: 'http://localhost:{api_port}/api/file.txt',
    name: 'deskpilot-sink.txt',
    onload: function () {{ sink.downloaded = true; }},
    onerror: function (e) {{ sink.downloadError = e.error; }},
}});
GM.notification({{ text: 'sink', title: 'Sink', timeout: 300 }}).then(function (clicked) {{
    sink.notificationDone = clicked === false;
}});
sink.ready = true;
"""


UNWRAPPED = """// ==UserScript==
// @name         Unwrapped
// @namespace    https://example.org/unwrapped
// @match        http://127.0.0.1/*
// @unwrap
// @run-at       document-end
// ==/UserScript==
var unwrappedGlobal = 'top-level';
function unwrappedFn() { return typeof GM_info; }
"""


def many_downloads(api_port: int, count: int) -> str:
    """``count`` GM_downloads at once, on pages whose query has ``downloads``: small files,
    each complete within milliseconds, whose ends the worker's one downloads listener must
    tell the call that started each."""
    return f"""// ==UserScript==
// @name         Many Downloads
// @namespace    https://example.org/many-downloads
// @match        http://127.0.0.1/*
// @grant        GM_download
// @connect      localhost
// ==/UserScript==
(function () {{
    if (!location.search.includes('downloads')) return;
    const out = (window.__downloads = {{ loaded: [], failed: [] }});
    for (let i = 0; i < {count}; i++) {{
        GM_download({{
            url: 'http://localhost:{api_port}/api/many-' + i,
            name: 'deskpilot-many-' + i + '.txt',
            onload: function () {{ out.loaded.push(i); }},
            onerror: function (e) {{ out.failed.push([i, e.error]); }},
        }});
    }}
}})();
"""
