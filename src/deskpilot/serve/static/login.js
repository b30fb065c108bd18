// The login page: says why a link failed, logs in with the kept token, returns to the page.
"use strict";
(() => {
  const WHY = {
    used: "This login link was already used: each link `deskpilot serve` prints works once, " +
      "and it was swapped for a login in another tab or browser. Paste the token " +
      "(`deskpilot mcp token`) below, or restart `deskpilot serve` for a new link.",
    unknown: "This login link is not one of this console's: it is from an earlier start of " +
      "`deskpilot serve` (each start prints a new one) or it was cut short. Open the newest " +
      "link, or paste the token (`deskpilot mcp token`) below.",
    limited: "Too many failed logins: wait a minute, then try again.",
    expired: "Your login ended: `deskpilot serve` was restarted since this tab logged in. " +
      "Open the new link it printed, or paste the token (`deskpilot mcp token`) below.",
  };
  const page = document.getElementById("login-page");
  const params = new URLSearchParams(location.search);
  const why = page.dataset.why || (params.get("why") === "expired" ? "expired" : "");
  document.getElementById("login-why").textContent = WHY[why] || "";
  const next = params.get("next") || "/";
  const target = next.startsWith("/") && !next.startsWith("//") && !next.startsWith("/\\") ? next : "/";
  if (params.has("token")) {  // keep the spent token out of the address bar and history
    history.replaceState(null, "", `/login${target !== "/" ? "?next=" + encodeURIComponent(target) : ""}`);
  }
  document.getElementById("login").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const token = ev.target.elements.token.value;
    const out = document.getElementById("login-error");
    const r = await fetch("/api/login", {method: "POST", headers: {"content-type": "application/json"}, body: JSON.stringify({token})});
    if (r.ok) { location.replace(target); return; }
    const body = await r.json().catch(() => ({}));
    out.textContent = body.error || `refused (${r.status})`;
  });
})();
