// deskpilot console: live previews. One streaming fetch per page carries every frame it shows:
// [u32 header length][header JSON][u32 body length][JPEG], big-endian (see serve/frames.py).
"use strict";

(() => {
  const log = [];          // the last frames drawn: {s, k, n, t (grabbed, s), drawn (ms)}
  let controller = null;
  let chain = Promise.resolve();  // frames are drawn in order (patches build on each other)

  function watch(sessionId, thumbs) {
    if (controller) controller.abort();
    controller = new AbortController();
    run(sessionId, thumbs, controller.signal);
  }

  async function run(sessionId, thumbs, signal) {
    const url = `/api/frames?watch=${encodeURIComponent(sessionId || "")}&thumbs=${thumbs ? 1 : 0}`;
    while (!signal.aborted) {
      try {
        const response = await fetch(url, {signal});
        if (!response.ok || !response.body) throw new Error(`frames: ${response.status}`);
        await read(response.body.getReader());
      } catch (e) {
        if (signal.aborted) return;
      }
      await new Promise((r) => setTimeout(r, 1000));  // the server restarted or dropped us
    }
  }

  async function read(reader) {
    let buffer = new Uint8Array(0);
    for (;;) {
      const {value, done} = await reader.read();
      if (done) return;
      const joined = new Uint8Array(buffer.length + value.length);
      joined.set(buffer);
      joined.set(value, buffer.length);
      buffer = joined;
      for (;;) {
        if (buffer.length < 4) break;
        const view = new DataView(buffer.buffer, buffer.byteOffset);
        const hlen = view.getUint32(0);
        if (buffer.length < 8 + hlen) break;
        const blen = view.getUint32(4 + hlen);
        if (buffer.length < 8 + hlen + blen) break;
        const header = JSON.parse(new TextDecoder().decode(buffer.subarray(4, 4 + hlen)));
        const body = buffer.slice(8 + hlen, 8 + hlen + blen);
        buffer = buffer.slice(8 + hlen + blen);
        show(header, body);
      }
    }
  }

  const thumbs = new Map();  // session -> its last thumbnail {h, blob}: for cards drawn later

  function show(h, body) {
    const blob = new Blob([body], {type: "image/jpeg"});
    if (h.k === "thumb") thumbs.set(h.s, {h, blob});
    const decoding = createImageBitmap(blob);
    chain = chain.then(() => decoding).then((bitmap) => draw(h, bitmap), () => {});
  }

  // a card's canvas made after its thumbnail came (a reload: the frames can beat the cards)
  function paint(canvas) {
    const last = thumbs.get(canvas.dataset.thumb);
    if (!last) return;
    const decoding = createImageBitmap(last.blob);
    chain = chain.then(() => decoding).then((bitmap) => draw(last.h, bitmap), () => {});
  }

  function draw(h, bitmap) {
    if (h.k === "thumb") {
      const canvas = document.querySelector(`canvas[data-thumb="${CSS.escape(h.s)}"]`);
      if (canvas) {
        const ctx = canvas.getContext("2d");
        const scale = Math.min(canvas.width / bitmap.width, canvas.height / bitmap.height);
        const w = bitmap.width * scale, hh = bitmap.height * scale;
        ctx.fillStyle = "#222";
        ctx.fillRect(0, 0, canvas.width, canvas.height);
        ctx.drawImage(bitmap, (canvas.width - w) / 2, (canvas.height - hh) / 2, w, hh);
        canvas.dataset.seq = String(h.n);
      }
    } else {
      const canvas = document.getElementById("preview");
      const view = window.deskpilot && window.deskpilot.view;
      if (canvas && view && view.name === "session" && view.id === h.s) {
        if (h.k === "key" && (canvas.width !== h.W || canvas.height !== h.H)) {
          canvas.width = h.W;
          canvas.height = h.H;
        }
        canvas.getContext("2d").drawImage(bitmap, h.x, h.y);
        canvas.dataset.seq = String(h.n);
        api.origin = {s: h.s, X: h.X || 0, Y: h.Y || 0, W: h.W, H: h.H};  // for a take-over
        if (api.onDraw) api.onDraw(h, canvas);  // the benchmark's probe
        const note = document.getElementById("preview-note");
        if (note) note.hidden = true;
      }
    }
    bitmap.close();
    log.push({s: h.s, k: h.k, n: h.n, t: h.t, drawn: performance.timeOrigin + performance.now()});
    if (log.length > 2000) log.splice(0, log.length - 2000);
  }

  const api = {watch, log, paint, onDraw: null, origin: null};
  window.deskpilotFrames = api;
})();
