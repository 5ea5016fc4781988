// The node's dashboard: polls /dashboard/state and draws the ring, the
// per-node request rates and latencies, background work and the slowest
// traces. No library and no network beyond the node that serves it.
"use strict";

const palette = ["#2563eb", "#d97706", "#059669", "#db2777", "#7c3aed", "#0891b2", "#65a30d", "#dc2626"];
const svgNS = "http://www.w3.org/2000/svg";
const windowMs = 10 * 60 * 1000, shortestSpanMs = 2 * 60 * 1000;
const colors = new Map();
let lastStatus = new Map();
let updates = 0;

function colorOf(address) {
  if (!colors.has(address)) colors.set(address, palette[colors.size % palette.length]);
  return colors.get(address);
}

function el(tag, attrs, text) {
  const e = tag.startsWith("svg:") ? document.createElementNS(svgNS, tag.slice(4)) : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}

function bytes(n) {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
  return (i === 0 ? n.toFixed(0) : n.toFixed(2)) + " " + units[i];
}

function arc(from, to, r, width) {
  // A ring sector from one fraction of the ring to another, clockwise from the top.
  const a0 = from * 2 * Math.PI - Math.PI / 2, a1 = to * 2 * Math.PI - Math.PI / 2;
  const r0 = r - width;
  const p = (a, rad) => [(rad * Math.cos(a)).toFixed(2), (rad * Math.sin(a)).toFixed(2)];
  const large = to - from > 0.5 ? 1 : 0;
  const [x0, y0] = p(a0, r), [x1, y1] = p(a1, r), [x2, y2] = p(a1, r0), [x3, y3] = p(a0, r0);
  return `M${x0},${y0} A${r},${r} 0 ${large} 1 ${x1},${y1} L${x2},${y2} A${r0},${r0} 0 ${large} 0 ${x3},${y3} Z`;
}

function drawRing(nodes) {
  const svg = document.getElementById("ring");
  svg.replaceChildren();
  const tokens = [];
  for (const n of nodes) for (const f of n.token_fractions || []) tokens.push({ f, n });
  tokens.sort((a, b) => a.f - b.f);
  // Each node owns the range that ends at each of its tokens.
  tokens.forEach((t, i) => {
    const prev = i === 0 ? tokens[tokens.length - 1].f - 1 : tokens[i - 1].f;
    const from = Math.max(prev, 0), to = t.f;
    const attrs = { d: arc(from, to === from ? from + 1e-4 : to, 100, 22), fill: colorOf(t.n.address),
      "data-address": t.n.address, opacity: t.n.status === "UP" ? "1" : "0.25" };
    svg.appendChild(el("svg:path", attrs));
    if (prev < 0) svg.appendChild(el("svg:path", { ...attrs, d: arc(prev + 1, 1, 100, 22) }));
  });
  const up = nodes.filter(n => n.status === "UP").length;
  svg.appendChild(el("svg:text", { x: 0, y: -4, "text-anchor": "middle", "font-size": 22, "font-weight": 600 }, `${up}/${nodes.length}`));
  svg.appendChild(el("svg:text", { x: 0, y: 16, "text-anchor": "middle", "font-size": 10, fill: "#6b7280" }, "nodes up"));
}

function drawNodes(nodes) {
  const body = document.querySelector("#nodes tbody");
  body.replaceChildren();
  for (const n of nodes) {
    const row = el("tr", { "data-address": n.address, "data-status": n.status });
    const swatch = el("td");
    swatch.appendChild(el("span", { class: "swatch", style: `background:${colorOf(n.address)}` }));
    row.appendChild(swatch);
    row.appendChild(el("td", {}, n.address));
    row.appendChild(el("td", { class: "status-" + n.status }, n.status));
    row.appendChild(el("td", {}, n.state));
    row.appendChild(el("td", {}, bytes(n.load_bytes)));
    row.appendChild(el("td", {}, (100 * n.ownership).toFixed(1) + "%"));
    row.appendChild(el("td", {}, String((n.token_fractions || []).length)));
    row.appendChild(el("td", {}, `${n.data_center} / ${n.rack}`));
    row.appendChild(el("td", { class: "muted" }, n.host_id));
    body.appendChild(row);
    const was = lastStatus.get(n.address);
    if (was !== undefined && was !== n.status) {
      const events = document.getElementById("events");
      events.appendChild(el("li", { "data-address": n.address, "data-status": n.status },
        `${new Date().toLocaleTimeString()}: ${n.address} is ${n.status}`));
    }
    lastStatus.set(n.address, n.status);
  }
}

// plot draws one line per node (and, for latencies, a dashed second line)
// over the time the samples cover: two minutes at least, ten at most.
function plot(id, activity, now, fields) {
  const svg = document.getElementById(id);
  svg.replaceChildren();
  const W = 400, H = 160, left = 40, right = 8, top = 8, bottom = 18;
  let maxY = 0, earliest = now;
  for (const samples of Object.values(activity))
    for (const s of samples) {
      earliest = Math.min(earliest, s.t);
      for (const f of fields) maxY = Math.max(maxY, s[f.key] || 0);
    }
  maxY = maxY > 0 ? maxY * 1.1 : 1;
  const span = Math.min(windowMs, Math.max(shortestSpanMs, now - earliest));
  const x = t => left + (W - left - right) * (1 - (now - t) / span);
  const y = v => top + (H - top - bottom) * (1 - v / maxY);
  for (let i = 0; i <= 4; i++) {
    const v = maxY * i / 4;
    svg.appendChild(el("svg:line", { class: "grid", x1: left, x2: W - right, y1: y(v), y2: y(v) }));
    svg.appendChild(el("svg:text", { x: left - 4, y: y(v) + 3, "text-anchor": "end" }, v >= 100 ? v.toFixed(0) : v.toPrecision(2)));
  }
  const step = span > 5 * 60000 ? 2 : 1;
  for (let m = 0; m * 60000 <= span; m += step)
    svg.appendChild(el("svg:text", { x: x(now - m * 60000), y: H - 4, "text-anchor": "middle" }, m === 0 ? "now" : `-${m}m`));
  let points = 0;
  for (const [address, samples] of Object.entries(activity)) {
    for (const f of fields) {
      const pts = samples.filter(s => now - s.t <= span).map(s => `${x(s.t).toFixed(1)},${y(s[f.key] || 0).toFixed(1)}`);
      if (pts.length === 0) continue;
      points += pts.length;
      const attrs = { points: pts.join(" "), stroke: colorOf(address), "data-address": address, "data-points": pts.length };
      if (f.dashed) attrs["stroke-dasharray"] = "3 2";
      svg.appendChild(el("svg:polyline", attrs));
    }
  }
  svg.setAttribute("data-points", points);
}

function drawBackground(nodes, activity) {
  const body = document.querySelector("#background tbody");
  body.replaceChildren();
  for (const n of nodes) {
    const samples = activity[n.address] || [];
    const last = samples[samples.length - 1] || {};
    const row = el("tr", { "data-address": n.address });
    const swatch = el("td");
    swatch.appendChild(el("span", { class: "swatch", style: `background:${colorOf(n.address)}` }));
    row.appendChild(swatch);
    row.appendChild(el("td", {}, n.address));
    for (const k of ["pc", "h", "s"]) row.appendChild(el("td", {}, last[k] === undefined ? "–" : String(last[k])));
    body.appendChild(row);
  }
}

function drawTraces(traces) {
  const body = document.querySelector("#traces tbody");
  body.replaceChildren();
  for (const t of traces) {
    const row = el("tr");
    row.appendChild(el("td", {}, new Date(t.started_at).toLocaleTimeString()));
    row.appendChild(el("td", {}, (t.duration_us / 1000).toFixed(2) + " ms"));
    row.appendChild(el("td", {}, t.coordinator));
    row.appendChild(el("td", { class: "request" }, t.request));
    row.appendChild(el("td", { class: "muted" }, t.session_id));
    body.appendChild(row);
  }
}

async function refresh() {
  try {
    const r = await fetch("/dashboard/state", { cache: "no-store" });
    if (!r.ok) throw new Error(`${r.status} ${r.statusText}`);
    const st = await r.json();
    document.getElementById("cluster").textContent = `${st.cluster_name} · seen from ${st.self}`;
    st.nodes.forEach(n => colorOf(n.address));
    drawRing(st.nodes);
    drawNodes(st.nodes);
    plot("plot-reads", st.activity, st.now, [{ key: "r" }]);
    plot("plot-writes", st.activity, st.now, [{ key: "w" }]);
    plot("plot-read-latency", st.activity, st.now, [{ key: "rp50", dashed: true }, { key: "rp99" }]);
    plot("plot-write-latency", st.activity, st.now, [{ key: "wp50", dashed: true }, { key: "wp99" }]);
    drawBackground(st.nodes, st.activity);
    drawTraces(st.traces);
    updates++;
    document.body.setAttribute("data-updates", updates);
    document.getElementById("updated").textContent = "updated " + new Date(st.now).toLocaleTimeString();
  } catch (e) {
    document.getElementById("updated").textContent = "cannot reach the node: " + e.message;
  }
}

refresh();
setInterval(refresh, 2000);
