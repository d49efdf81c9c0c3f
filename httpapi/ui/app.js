// The status page: it polls /v1/status and draws it. Every value is put
// into the page as text (textContent, attributes), never as HTML.
"use strict";

const palette = ["#2e90fa", "#f79009", "#12b76a", "#9e77ed", "#f04438", "#06aed4", "#ee46bc", "#667085", "#84cc16", "#b54708"];
const colours = new Map(); // member id -> colour, kept for the page's life
let lastOwners = null;

function colourOf(id) {
  if (!id) return "#e4e7ec";
  if (!colours.has(id)) colours.set(id, palette[colours.size % palette.length]);
  return colours.get(id);
}

// el makes an element with text (or child nodes) and attributes.
function el(tag, content, attrs) {
  const e = document.createElement(tag);
  if (content instanceof Node) e.appendChild(content);
  else if (Array.isArray(content)) content.forEach(c => e.appendChild(c instanceof Node ? c : document.createTextNode(String(c))));
  else if (content !== undefined && content !== null) e.textContent = String(content);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
  return e;
}

function swatch(colour) {
  const s = el("span", undefined, { class: "swatch" });
  s.style.background = colour; // CSSOM: the page's policy refuses style attributes
  return s;
}

function na(text) { return el("span", text || "n/a", { class: "na" }); }

function bytes(n) {
  if (n === null || n === undefined) return na();
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
  return (i === 0 ? n : n.toFixed(1)) + " " + units[i];
}

function seconds(s) {
  if (s < 1e-3) return (s * 1e6).toFixed(0) + " µs";
  if (s < 1) return (s * 1e3).toFixed(s < 0.01 ? 2 : 1) + " ms";
  return s.toFixed(2) + " s";
}

function when(t) {
  if (!t) return na("unknown");
  const d = new Date(t);
  return d.toLocaleString();
}

function ago(t, now) {
  const s = Math.max(0, (new Date(now) - new Date(t)) / 1000);
  if (s < 90) return Math.round(s) + " s ago";
  if (s < 5400) return Math.round(s / 60) + " min ago";
  return (s / 3600).toFixed(1) + " h ago";
}

function fill(tbody, rows, empty, cols) {
  tbody.replaceChildren();
  if (rows.length === 0) tbody.appendChild(el("tr", el("td", na(empty), { colspan: cols })));
  rows.forEach(r => tbody.appendChild(r));
}

function row(cells, attrs) {
  const tr = el("tr", undefined, attrs);
  cells.forEach(c => {
    if (c instanceof HTMLTableCellElement) tr.appendChild(c);
    else tr.appendChild(el("td", c));
  });
  return tr;
}

function num(v) { return el("td", v === null || v === undefined ? na() : v, { class: "num" }); }

function card(value, label, cls) {
  const c = el("div", undefined, { class: "card" });
  c.appendChild(el("b", value, cls ? { class: cls } : {}));
  c.appendChild(el("span", label));
  return c;
}

function draw(st) {
  document.getElementById("cluster").textContent = st.cluster_name ? "— " + st.cluster_name : "";
  document.getElementById("seen").textContent = "as seen by " + st.self + " at " + new Date(st.now).toLocaleTimeString();
  const byID = new Map(st.members.map(m => [m.id, m]));
  const addr = id => (byID.get(id) || {}).addr || id;

  // Summary.
  const sum = document.getElementById("summary");
  sum.replaceChildren(
    card(st.partition_table_version || "none yet", "partition table version"),
    card(st.safe ? "safe" : "not safe", st.safe ? "every backup is filled" : (st.safe_why || st.loading || ""), st.safe ? "good" : "warn"),
    card(st.loaded ? "loaded" : "loading", st.loaded ? "every member serves its partitions" : (st.loading || ""), st.loaded ? "good" : "warn"),
    card(st.members.filter(m => m.live).length + " live", st.replica_count + " replicas per partition"));

  // Members.
  st.members.forEach(m => colourOf(m.id));
  fill(document.querySelector("#members tbody"), st.members.map(m => {
    const state = !m.live ? "gone (not in membership)" : m.suspect ? "suspected (a probe went unanswered)" : m.draining ? "leaving" : "live";
    const r = row([
      el("td", swatch(colourOf(m.id))),
      el("td", m.addr, { title: m.id }),
      (m.master ? "master" : "member") + (m.self ? " (this one)" : ""),
      m.started ? el("td", when(m.started), { title: ago(m.started, st.now) }) : el("td", na("unknown")),
      num(m.partitions), num(m.backups),
      el("td", state, { class: "state" }),
    ], { "data-id": m.id, "data-live": m.live, "data-suspect": m.suspect });
    if (!m.live) r.classList.add("gone");
    if (m.suspect) r.classList.add("suspect");
    return r;
  }), "no members yet", 7);

  // Partition grid.
  const grid = document.getElementById("grid");
  if (grid.children.length !== st.owners.length) {
    grid.replaceChildren(...st.owners.map((_, p) => el("div", undefined, { "data-partition": p })));
  }
  let moved = 0;
  st.owners.forEach((owner, p) => {
    const cell = grid.children[p];
    const changed = lastOwners !== null && lastOwners[p] !== undefined && lastOwners[p] !== owner;
    if (changed) moved++;
    cell.classList.toggle("moved", changed);
    cell.style.background = colourOf(owner);
    cell.setAttribute("data-owner", owner);
    cell.title = "partition " + p + ": " + (owner ? addr(owner) : "no owner");
  });
  document.getElementById("grid-note").textContent = st.owners.length === 0 ? "(no partition table yet)"
    : moved > 0 ? "(" + moved + " moved since the last refresh, outlined)" : "(" + st.owners.length + " partitions)";
  lastOwners = st.owners.slice();

  // Maps.
  fill(document.querySelector("#maps tbody"), st.maps.map(m => {
    const load = m.loaded ? "loaded" : "loading " + m.loaded_partitions + " / " + m.owned_partitions;
    const lat = m.store_latency ? seconds(m.store_latency.p50_seconds) + " / " + seconds(m.store_latency.p99_seconds) : na("no writes on this member yet");
    const disk = v => m.disk ? bytes(v) : (m.disk_error ? na(m.disk_error) : na(m.persisted ? "n/a" : "memory only"));
    return row([
      m.name, num(m.entries), num(m.size + " / " + m.backup_entries),
      el("td", load, { class: m.loaded ? "" : "warn" }),
      el("td", lat),
      el("td", m.disk ? [bytes(m.disk.log_bytes), " in " + m.disk.log_files + " files"] : disk()),
      el("td", m.disk ? [bytes(m.disk.snapshot_bytes), " in " + m.disk.snapshots] : disk()),
      el("td", m.disk ? bytes(m.disk.disk_bytes) : disk()),
      el("td", m.live_bytes !== null ? bytes(m.live_bytes) : na("no answer in time"), { "data-live-bytes": m.live_bytes !== null ? m.live_bytes : "" }),
      el("td", m.disk_per_live !== null ? m.disk_per_live.toFixed(2) : disk(), { "data-disk-per-live": m.disk_per_live !== null ? m.disk_per_live : "" }),
    ], { "data-map": m.name });
  }), "no maps held", 10);

  // Checkpoints.
  const cp = st.checkpoints;
  const cpRows = [];
  if (cp && cp.jobs) {
    cp.jobs.forEach(j => j.pipelines.forEach(p => cpRows.push(row([j.job, num(p.pipeline), num(p.checkpoints), num(p.latest), el("td", bytes(j.bytes))], { "data-job": j.job }))));
  }
  fill(document.querySelector("#checkpoints tbody"), cpRows, !cp ? "no checkpoint storage given to this member" : cp.error || "no checkpoints", 5);

  // Take-overs, newest first.
  fill(document.querySelector("#takeovers tbody"), st.take_overs.slice().reverse().map(t => row([
    el("td", ago(t.at, st.now), { title: new Date(t.at).toLocaleString() }),
    ({ promotion: "fail-over", handover: "migration", store: "load" })[t.source] || t.source,
    t.source, t.from === st.self ? "its own backup copy" : t.from ? addr(t.from) : na("map store"), num(t.partitions), num(t.partition_table_version),
  ])), "none since this member started", 6);

  // Every live member's take-overs, newest first.
  const ct = st.cluster_take_overs;
  const kind = t => ({ promotion: "fail-over", handover: "migration", store: "load" })[t.source] || t.source;
  fill(document.querySelector("#cluster-takeovers tbody"), ct.take_overs.map(t => row([
    el("td", ago(t.at, st.now), { title: new Date(t.at).toLocaleString() }),
    el("td", [swatch(colourOf(t.member)), " " + addr(t.member)], { title: t.member }),
    kind(t), t.from === t.member ? "its own backup copy" : t.from ? addr(t.from) : na("map store"),
    num(t.partitions), num(t.partition_table_version),
  ], { "data-member": t.member, "data-source": t.source })), "none since the members started", 6);
  document.getElementById("cluster-takeovers-note").textContent = ct.unanswered.length === 0
    ? "(every live member answered)" : "(no answer in time from " + ct.unanswered.map(addr).join(", ") + ": theirs are missing)";
}

async function refresh() {
  const problem = document.getElementById("problem");
  try {
    const resp = await fetch("/v1/status", { cache: "no-store" });
    const body = await resp.json();
    if (!resp.ok) throw new Error(body.error || ("HTTP " + resp.status));
    draw(body);
    problem.hidden = true;
    document.body.setAttribute("data-refreshed", body.now);
  } catch (e) {
    problem.textContent = "this member does not answer: " + e.message + " (the values below are from the last answer)";
    problem.hidden = false;
  }
}

refresh();
setInterval(refresh, 1500);
