// deskpilot page-rules bridge (isolated world): carries rule errors from the page runtime to
// the extension's storage, and re-applies a tab's open TEMP panes after a reload. deskpilot
// reaches it over CDP (this world cannot be touched by the page).
(() => {
  "use strict";
  if (globalThis.__dpBridge) return;
  const send = (msg) => chrome.runtime.sendMessage(msg);
  globalThis.__dpBridge = {
    call: (msg) => send(msg),
    version: 1,
  };
  document.addEventListener("deskpilot-pages:error", (e) => {
    if (typeof e.detail === "string") send({ op: "error", detail: e.detail }).catch(() => {});
  });
  let isTop = false;
  try { isTop = window.top === window; } catch (e) { isTop = false; }
  if (isTop) {
    send({ op: "hello" }).then((reply) => {
      if (reply && typeof reply.css === "string") {
        const detail = JSON.stringify({ kind: "css", code: reply.css });
        document.dispatchEvent(new CustomEvent("deskpilot-pages:pane", { detail }));
      }
    }).catch(() => {});
  }
})();
