"use strict";
document.getElementById("login").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const token = ev.target.elements.token.value;
  const out = document.getElementById("login-error");
  const r = await fetch("/api/login", {method: "POST", headers: {"content-type": "application/json"}, body: JSON.stringify({token})});
  if (r.ok) { location.replace("/"); return; }
  const body = await r.json().catch(() => ({}));
  out.textContent = body.error || `refused (${r.status})`;
});
