// The dashboard page: fetches /api/metrics every two seconds and draws each run.
// Everything shown comes from that one document; values the run did not report are
// left out, never drawn as zeros. Text from runs is inserted as text, never as HTML.
"use strict";

const token = new URLSearchParams(location.search).get("token") ||
  new URLSearchParams(location.hash.slice(1)).get("token");
const charts = {};   // run id → {panel name → uPlot}
window.babysitCharts = charts;  // for tests and curious people

const PANELS = [
  ["loss", (name) => /(^|[/_])loss$|^loss|val_loss|eval_loss|perplexity/i.test(name)],
  ["learning rate", (name) => /^(lr|learning_rate)$|\blr\b/i.test(name)],
  ["gradient norm", (name) => /grad_norm|gradient_norm/i.test(name)],
  ["throughput", (name) => /tokens\/s|samples\/s|it\/s|steps_per_second|tokens_per_second/i.test(name)],
];

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
  for (const child of children) node.append(child);
  return node;
}

function fmt(value) {
  if (value === null || value === undefined) return "–";
  if (typeof value !== "number") return String(value);
  const abs = Math.abs(value);
  return abs !== 0 && (abs < 1e-3 || abs >= 1e6) ? value.toExponential(2) : String(+value.toPrecision(4));
}

function duration(seconds) {
  if (seconds === null || seconds === undefined) return "–";
  const s = Math.round(seconds), h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60);
  return h ? `${h}h ${m}m` : m ? `${m}m ${s % 60}s` : `${s}s`;
}

function markerPlugin(steps) {
  // Vertical red lines at the steps where anomalies were raised.
  return {
    hooks: {
      draw: [(u) => {
        const ctx = u.ctx;
        ctx.save();
        ctx.strokeStyle = "rgba(200, 30, 30, 0.8)";
        ctx.lineWidth = 1.5 * devicePixelRatio;
        for (const step of steps) {
          const x = u.valToPos(step, "x", true);
          if (x < u.bbox.left || x > u.bbox.left + u.bbox.width) continue;
          ctx.beginPath();
          ctx.moveTo(x, u.bbox.top);
          ctx.lineTo(x, u.bbox.top + u.bbox.height);
          ctx.stroke();
        }
        ctx.restore();
      }],
    },
  };
}

const COLORS = ["#2563eb", "#dc2626", "#059669", "#d97706", "#7c3aed", "#0891b2"];

function drawPanel(container, run, title, names, markers) {
  const parts = names.map((n) => [run.series[n].steps, run.series[n].values]);
  const data = parts.length === 1 ? [parts[0][0], parts[0][1]] : uPlot.join(parts);
  const key = `${run.id}:${title}`;
  const existing = charts[key];
  const signature = names.join("|") + "#" + markers.join(",");
  if (existing && existing.signature === signature) {
    existing.plot.setData(data);
    existing.points = data[0].length;
    container.append(existing.node);
    return existing.node;
  }
  if (existing) existing.plot.destroy();
  const node = el("div", {class: "chart", "data-panel": title, "data-markers": markers.join(",")},
                  el("h3", {}, title + (markers.length ? `  (anomalies at ${markers.join(", ")})` : "")));
  const plot = new uPlot({
    width: 420, height: 180,
    series: [{label: "step"}, ...names.map((n, i) => ({label: n, stroke: COLORS[i % COLORS.length], width: 1.5, spanGaps: false}))],
    scales: {x: {time: false}},
    axes: [{}, {size: 64, values: (u, ticks) => ticks.map(fmt)}],
    plugins: [markerPlugin(markers)],
  }, data, node);
  charts[key] = {plot, node, signature, points: data[0].length};
  container.append(node);
  return node;
}

function renderRun(run, holder) {
  const card = holder.querySelector(`[data-run="${CSS.escape(run.id)}"]`) ||
    el("section", {class: "run", "data-run": run.id});
  card.replaceChildren();
  const total = run.target_steps ? `/${run.target_steps}` : "";
  card.append(el("h2", {}, `${run.target}  `, el("span", {class: `badge ${run.health}`}, run.health),
                 "  ", el("span", {class: "badge notice"}, run.state)));
  const facts = el("div", {class: "facts"},
    el("span", {}, `${run.kind}`),
    el("span", {}, `step ${run.step ?? "–"}${total}`),
    el("span", {}, `ETA ${duration(run.eta_seconds)}`));
  for (const [k, v] of Object.entries(run.latest || {}).slice(0, 6)) facts.append(el("span", {}, `${k}=${fmt(v)}`));
  const mfu = run.efficiency && run.efficiency.mfu;
  if (mfu) facts.append(el("span", {title: mfu.reason || (mfu.inputs && mfu.inputs.formula) || ""},
    mfu.status === "estimated" ? `MFU ~${(100 * mfu.value).toPrecision(3)}% (est.)` : "MFU unavailable"));
  if (run.gpu && run.gpu.text) facts.append(el("span", {}, run.gpu.text));
  if (run.url) facts.append(el("a", {href: run.url, rel: "noopener"}, "run page"));
  card.append(facts);
  if (run.status && run.status.length) card.append(el("div", {class: "status-lines"}, run.status.join("\n")));
  const markers = [...new Set((run.anomalies || []).filter((a) => a.step !== null).map((a) => a.step))].sort((a, b) => a - b);
  const grid = el("div", {class: "charts"});
  const names = Object.keys(run.series || {});
  for (const [title, test] of PANELS) {
    const chosen = names.filter((n) => test(n) && run.series[n].steps.length).slice(0, 4);
    if (chosen.length) drawPanel(grid, run, title, chosen, markers);
  }
  if (run.gpu && typeof run.gpu.util_percent === "number") {
    grid.append(el("div", {class: "chart"}, el("h3", {}, `GPU ${fmt(run.gpu.util_percent)}% utilisation`)));
  }
  card.append(grid);
  if (run.anomalies && run.anomalies.length) {
    const list = el("ul", {class: "anomalies"});
    for (const a of run.anomalies) {
      list.append(el("li", {class: a.resolved ? "resolved" : "", "data-type": a.type},
        `${a.severity} ${a.type}${a.step !== null ? " at step " + a.step : ""}: ${a.description}`));
    }
    card.append(list);
  }
  for (const proposal of run.awaiting_approval || []) {
    card.append(el("div", {class: "approval"}, `needs approval (apply it yourself): ${proposal}`));
  }
  if (run.verdict) {
    card.append(el("div", {class: "verdict"}, run.verdict.summary));
  }
  if (!card.parentNode) holder.append(card);
}

async function refresh() {
  const status = document.getElementById("status");
  try {
    const response = await fetch("/api/metrics", {headers: token ? {Authorization: `Bearer ${token}`} : {}, cache: "no-store"});
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    const doc = await response.json();
    const holder = document.getElementById("runs");
    if (doc.runs.length) holder.querySelector(".empty")?.remove();
    for (const run of doc.runs) renderRun(run, holder);
    status.textContent = `${doc.runs.length} ${doc.runs.length === 1 ? "run" : "runs"} · updated ${new Date().toLocaleTimeString()}`;
    document.body.dataset.updates = String(Number(document.body.dataset.updates || 0) + 1);
  } catch (error) {
    status.textContent = `cannot read /api/metrics: ${error.message}`;
  }
}

refresh();
setInterval(refresh, 2000);
