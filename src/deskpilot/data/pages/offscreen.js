// deskpilot page-rules offscreen document: puts GM_setClipboard's text on the clipboard (a
// service worker has no DOM to copy from). Text types go as text; "html" (or a text/html
// MIME type) as HTML with the same text as its plain form.
"use strict";
function copy(data, type) {
  const mime = !type || type === "text" ? "text/plain" : type === "html" ? "text/html" : String(type);
  const onCopy = (e) => {
    e.preventDefault();
    e.clipboardData.setData(mime, data);
    if (mime !== "text/plain") e.clipboardData.setData("text/plain", data);
  };
  document.addEventListener("copy", onCopy);
  const area = document.getElementById("clip");
  area.value = data;
  area.select();
  let ok = false;
  try { ok = document.execCommand("copy"); } finally { document.removeEventListener("copy", onCopy); }
  return ok;
}
chrome.runtime.onMessage.addListener((msg, sender, reply) => {
  if (!msg || msg.target !== "offscreen") return false;
  if (msg.op === "copy") reply({ ok: copy(String(msg.data), msg.type) });
  return false;
});
