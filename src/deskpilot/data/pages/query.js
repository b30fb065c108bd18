// query_page: the matches of a selector, with script/style bodies, data: URLs and long
// attribute values elided. Called as (selector, limit, maxChars).
((sel, limit, maxChars) => {
  let nodes;
  try { nodes = document.querySelectorAll(sel); }
  catch (e) { return { error: String(e.message || e) }; }
  const matches = [];
  for (const el of Array.from(nodes).slice(0, limit)) {
    let html = el.outerHTML;
    html = html.replace(/(<(script|style)\b[^>]*>)([\s\S]*?)(<\/\2>)/gi,
      (m, open, tag, body, close) => body.length ? `${open}/* ${body.length} chars elided */${close}` : m);
    html = html.replace(/(["'])data:([^"']{0,30})[^"']*\1/g,
      (m, q, head) => m.length > 60 ? `${q}data:${head}…(${m.length} chars elided)${q}` : m);
    html = html.replace(/="([^"]{200})[^"]+"/g, (m, head) => `="${head}…"`);
    const truncated = html.length > maxChars;
    matches.push({
      html: truncated ? html.slice(0, maxChars) : html, truncated, chars: el.outerHTML.length,
    });
  }
  return { count: nodes.length, url: location.href, title: document.title, matches };
})
