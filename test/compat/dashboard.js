// The admin dashboard in headless Chromium, driven over the DevTools
// protocol (on a pipe: no network library needed): against a running
// three-node cluster under a light write load, the page loads, lists three
// nodes up on its ring, its request plots draw a line for every node; a
// node is then stopped and the page, without a reload, shows it down.
// A screenshot of the page goes to SCREENSHOT.
//
// Usage: node dashboard.js ADMIN_URL NATIVE_PORT SIBYL CLUSTER_DIR SCREENSHOT
"use strict";
const { spawn, execFileSync } = require("child_process");
const fs = require("fs");

const [adminURL, nativePort, sibyl, clusterDir, screenshot] = process.argv.slice(2);
const chromium = "/usr/bin/chromium-headless-shell";

function fail(msg) {
  console.error("dashboard: " + msg);
  process.exit(1);
}

// DevTools over --remote-debugging-pipe: commands on fd 3, answers and
// events on fd 4, each message JSON ended by a NUL byte.
const browser = spawn(chromium, ["--no-sandbox", "--disable-gpu", "--remote-debugging-pipe", "--window-size=1280,1600", "about:blank"],
  { stdio: ["ignore", "ignore", "ignore", "pipe", "pipe"] });
browser.on("exit", code => { if (!done) fail(`chromium exited (${code})`); });
let done = false, nextID = 1, buffered = "";
const waiting = new Map();
browser.stdio[4].on("data", chunk => {
  buffered += chunk.toString("utf8");
  let end;
  while ((end = buffered.indexOf("\0")) >= 0) {
    const msg = JSON.parse(buffered.slice(0, end));
    buffered = buffered.slice(end + 1);
    const w = waiting.get(msg.id);
    if (w) {
      waiting.delete(msg.id);
      if (msg.error) w.reject(new Error(JSON.stringify(msg.error))); else w.resolve(msg.result);
    }
  }
});
function send(method, params, sessionId) {
  const id = nextID++;
  const msg = { id, method, params: params || {} };
  if (sessionId) msg.sessionId = sessionId;
  browser.stdio[3].write(JSON.stringify(msg) + "\0");
  return new Promise((resolve, reject) => waiting.set(id, { resolve, reject }));
}
const sleep = ms => new Promise(r => setTimeout(r, ms));

// What the page shows, read from its DOM.
const probe = `JSON.stringify({
  updates: +document.body.dataset.updates,
  nodes: [...document.querySelectorAll("#nodes tbody tr")].map(r => [r.dataset.address, r.dataset.status]),
  ringPaths: document.querySelectorAll("#ring path").length,
  lines: Object.fromEntries([...document.querySelectorAll("svg.plot")].map(s =>
    [s.id, [...s.querySelectorAll("polyline")].map(p => [p.dataset.address, +p.dataset.points])])),
  events: [...document.querySelectorAll("#events li")].map(e => [e.dataset.address, e.dataset.status]),
  error: document.getElementById("updated").textContent
})`;

async function until(session, what, test, seconds) {
  let last;
  for (const deadline = Date.now() + seconds * 1000; Date.now() < deadline; await sleep(500)) {
    const r = await send("Runtime.evaluate", { expression: probe, returnByValue: true }, session);
    if (r.exceptionDetails || typeof r.result.value !== "string") {
      last = r.exceptionDetails ? r.exceptionDetails.text : "nothing yet"; // still loading
      continue;
    }
    last = JSON.parse(r.result.value);
    if (test(last)) return last;
  }
  fail(`${what}: not after ${seconds} s; the page shows ${JSON.stringify(last)}`);
}

(async () => {
  // A light write load, so that every node's rates and latencies move.
  const load = spawn(sibyl, ["stress", "write", "--port", nativePort, "--keyspace", "dashboard", "--duration", "40s", "--rate", "300"],
    { stdio: "ignore" });
  const { targetId } = await send("Target.createTarget", { url: adminURL });
  const { sessionId } = await send("Target.attachToTarget", { targetId, flatten: true });
  const drawn = await until(sessionId, "three nodes up and every node's request lines drawn", s => {
    if (s.nodes.length !== 3 || s.nodes.some(n => n[1] !== "UP") || s.ringPaths < 3) return false;
    return ["plot-writes", "plot-write-latency"].every(id => {
      const lines = s.lines[id] || [];
      return new Set(lines.map(l => l[0])).size === 3 && lines.every(l => l[1] >= 2);
    });
  }, 90);
  console.log(`dashboard: ${drawn.nodes.length} nodes up, ${drawn.ringPaths} ring sectors, write lines ${JSON.stringify(drawn.lines["plot-writes"])}`);
  const shot = await send("Page.captureScreenshot", { format: "png" }, sessionId);
  fs.writeFileSync(screenshot, Buffer.from(shot.data, "base64"));
  const before = drawn.updates;
  execFileSync(sibyl, ["cluster", "stop", "node3", "--dir", clusterDir], { stdio: "ignore" });
  const down = await until(sessionId, "node3 shown down without a reload", s =>
    s.updates > before && s.nodes.some(n => n[0] === "127.0.0.3" && n[1] === "DOWN") &&
    s.events.some(e => e[0] === "127.0.0.3" && e[1] === "DOWN"), 60);
  console.log(`dashboard: after ${down.updates - before} updates the page shows ${JSON.stringify(down.nodes)}`);
  load.kill();
  done = true;
  browser.kill();
  process.exit(0);
})().catch(e => fail(e.stack || String(e)));
