// hallulab report page: reads the JSON document embedded in the page (hallulab.report.payload)
// and draws the summary, the record explorer, the curves and the correction table. No network.
"use strict";
(function () {
  const data = JSON.parse(document.getElementById("report-data").textContent);
  const $ = (id) => document.getElementById(id);
  const el = (tag, attrs, children) => {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (key === "text") node.textContent = value;
      else node.setAttribute(key, value);
    }
    for (const child of children || []) node.appendChild(child);
    return node;
  };
  const fmt = (v, digits) => (v === null || v === undefined || Number.isNaN(v) ? "" : Number(v).toFixed(digits));
  // a score for reading: 4 significant digits (the payload keeps every digit; the title shows it)
  const score4 = (v) => (v === null || v === undefined ? "" : Number(Number(v).toPrecision(4)).toString());
  // rank 0 (least likely hallucinated) .. 1 (most): ColorBrewer's purple-orange PuOr, light ends,
  // told apart with any colour-vision deficiency
  const RAMP = [[178, 171, 210], [216, 218, 235], [247, 247, 247], [254, 224, 182], [253, 184, 99]];
  const colour = (rank) => {
    const at = Math.min(Math.max(Number(rank) || 0, 0), 1) * (RAMP.length - 1);
    const i = Math.min(Math.floor(at), RAMP.length - 2), t = at - i;
    const mix = RAMP[i].map((c, k) => Math.round(c + (RAMP[i + 1][k] - c) * t));
    return `rgb(${mix.join(", ")})`;
  };
  const HALLUCINATED_ABOVE = 0.499; // the evaluation's positive class (hallulab.evaluation.levels)
  const mark = (label) => {
    if (label === null || label === undefined) return null;
    const bad = label > HALLUCINATED_ABOVE;
    return el("span", { class: `mark ${bad ? "bad" : "good"}`, text: `${bad ? "✗" : "✓"} ${label}`,
      title: `label ${label}` });
  };

  // a text whose `backticked` spans are code (the summary's notes are Markdown): text and <code> nodes
  const withCode = (text) => String(text).split("`").map((part, i) => (i % 2 ? el("code", { text: part }) : document.createTextNode(part)));

  // --- header
  for (const note of data.notes) $("notes").appendChild(el("li", {}, withCode(note)));

  // --- summary, sortable: summary.csv's columns, each interval in one cell
  const summary = data.summary;
  const index = new Map(summary.columns.map((name, i) => [name, i]));
  const summaryColumns = [["method", "method"], ["variant", "variant"], ["level", "level"],
    ["metric_1", "metric"], ["value_1", "value"], ["ci_1", "95% interval"], ["paper_1", "paper"],
    ["metric_2", "metric"], ["value_2", "value"], ["ci_2", "95% interval"], ["paper_2", "paper"]];
  const interval = (row, key) => {
    const low = row[index.get(`${key}_low`)], high = row[index.get(`${key}_high`)];
    return low === null || high === null || low === undefined || high === undefined ? null : [low, high];
  };
  const shown = summaryColumns.every(([key]) => index.has(key) || (index.has(`${key}_low`) && index.has(`${key}_high`)))
    ? summaryColumns : summary.columns.map((name) => [name, name]);
  const cellValue = (row, key) => (index.has(key) ? row[index.get(key)] : interval(row, key));
  // each row's reasons for its empty cells, kept with the row when the table is sorted
  const reasonsOf = new Map(summary.rows.map((row, i) => [row, (summary.reasons || [])[i]]));
  let sortKey = null, sortDescending = false;
  function drawSummary() {
    const table = $("summary-table");
    table.innerHTML = "";
    if (!summary.rows.length) {
      table.appendChild(el("tr", {}, [el("td", { text: data.absent.summary })]));
      return;
    }
    const head = el("tr");
    for (const [key, title] of shown) {
      const th = el("th", { text: title, "data-column": key });
      if (key === sortKey) th.className = sortDescending ? "sorted-desc" : "sorted-asc";
      th.addEventListener("click", () => {
        sortDescending = sortKey === key ? !sortDescending : false;
        sortKey = key;
        drawSummary();
      });
      head.appendChild(th);
    }
    table.appendChild(head);
    const rows = summary.rows.slice();
    if (sortKey !== null) {
      const key = (row) => { const v = cellValue(row, sortKey); return Array.isArray(v) ? v[0] : v; };
      rows.sort((a, b) => {
        const x = key(a), y = key(b);
        if (x === y) return 0;
        if (x === null || x === undefined) return 1;
        if (y === null || y === undefined) return -1;
        const order = typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y));
        return sortDescending ? -order : order;
      });
    }
    for (const row of rows) {
      const why = reasonsOf.get(row) || {};
      table.appendChild(el("tr", {}, shown.map(([key]) => {
        const v = cellValue(row, key);
        if (Array.isArray(v)) return el("td", { class: "num", text: `[${fmt(v[0], 1)}, ${fmt(v[1], 1)}]` });
        if (typeof v === "number") return el("td", { class: "num", text: fmt(v, 1) });
        if ((v === null || v === undefined) && why[key]) {
          // an undefined metric or interval: n/a with the evaluation's reason
          return el("td", { class: "num na", title: why[key] }, [el("span", { text: "n/a" }),
            el("span", { class: "reason", text: why[key] })]);
        }
        return el("td", { text: v === null || v === undefined ? "" : v });
      })));
    }
  }
  drawSummary();

  // --- record explorer
  const records = new Map(data.records.map((r) => [r.id, r]));
  const methods = new Map(data.methods.map((m) => [m.name, m]));
  const fill = (select, values, labels) => {
    select.innerHTML = "";
    values.forEach((v, i) => select.appendChild(el("option", { value: v, text: labels ? labels[i] : v })));
  };
  fill($("record"), data.records.map((r) => r.id));
  fill($("method"), data.methods.map((m) => m.name), data.methods.map((m) => `${m.name} (${m.title})`));

  function fillVariants() {
    const method = methods.get($("method").value);
    fill($("variant"), method ? method.variants.map((v) => v.name) : []);
  }

  // the key in data.units of the units a variant scores (the payload names it)
  function unitsKey(method, variant) {
    const found = (methods.get(method) || { variants: [] }).variants.find((v) => v.name === variant);
    return found ? found.units : method;
  }

  function describe(method, variant, level, record, index) {
    const r = records.get(record);
    if (level === "sentence") {
      const s = r.sentences[index] || { text: "(no such sentence)", label: null };
      return { t: s.text, l: s.label, d: [] };
    }
    if (level === "response") return { t: "the whole response", l: r.response_label, d: [] };
    const units = ((data.units[unitsKey(method, variant)] || {})[level] || {})[record] || [];
    return units.find((u) => u.i === index) || { t: `(${level} ${index})`, l: null, d: [] };
  }

  function drawRecord() {
    const record = records.get($("record").value);
    const method = $("method").value, variant = $("variant").value;
    const byLevel = ((data.scores[method] || {})[variant]) || {};
    $("prompt").textContent = record.prompt ? `prompt: ${record.prompt}` : "";
    if (record.prompt_label !== null && record.prompt_label !== undefined) {
      const m = mark(record.prompt_label);
      if (m) $("prompt").appendChild(m);
    }
    // the response, its sentences coloured when the variant scores sentences
    const response = $("response");
    response.innerHTML = "";
    const sentenceRows = new Map(((byLevel.sentence || {})[record.id] || []).map((row) => [row[0], row]));
    if (record.sentences.length) {
      record.sentences.forEach((sentence, index) => {
        const row = sentenceRows.get(index);
        const span = el("span", { class: "unit", "data-sentence": String(index), text: sentence.text });
        if (row) {
          span.style.background = colour(row[2]);
          span.title = `score ${row[1]} (rank ${fmt(row[2], 2)})`;
        }
        response.appendChild(span);
        const m = mark(sentence.label);
        if (m) response.appendChild(m);
        response.appendChild(document.createTextNode(" "));
      });
    } else {
      response.textContent = record.response || "(no response)";
    }
    const responseRow = ((byLevel.response || {})[record.id] || [])[0];
    if (responseRow) {
      const line = el("div", { class: "record-score", text: `response score ${score4(responseRow[1])} (rank ${fmt(responseRow[2], 2)})`,
        title: `score ${responseRow[1]}` });
      line.style.background = colour(responseRow[2]);
      const m = mark(record.response_label);
      if (m) line.appendChild(m);
      response.appendChild(line);
    }
    // every unit the variant scored in this record, level by level
    const units = $("units");
    units.innerHTML = "";
    for (const level of ["claim", "fact", "sentence", "prompt", "response"]) {
      const rows = (byLevel[level] || {})[record.id];
      if (!rows || !rows.length) continue;
      units.appendChild(el("h3", { text: `${level} units (${rows.length})` }));
      const table = el("table", { "data-level": level });
      table.appendChild(el("tr", {}, ["#", "unit", "score", "rank", "label", "detail"].map((t) => el("th", { text: t }))));
      for (const [index, score, rank] of rows) {
        const unit = describe(method, variant, level, record.id, index);
        const detail = el("dl", {}, unit.d.flatMap(([name, value]) => [el("dt", { text: name }), el("dd", { text: value })]));
        const text = el("td", { class: "unit-text", text: unit.t });
        text.style.background = colour(rank);
        const label = el("td");
        const m = mark(unit.l);
        if (m) label.appendChild(m);
        table.appendChild(el("tr", { "data-unit": String(index) }, [
          el("td", { class: "num", text: String(index) }), text,
          el("td", { class: "num", text: score4(score), title: String(score) }), el("td", { class: "num", text: fmt(rank, 2) }),
          label, el("td", {}, [detail])]));
      }
      units.appendChild(table);
    }
    if (!units.childNodes.length) units.appendChild(el("p", { text: "This variant scored no unit of this record." }));
    const list = $("sample-list");
    list.innerHTML = "";
    for (const sample of record.samples) list.appendChild(el("li", { text: sample }));
    $("samples").querySelector("summary").textContent = `samples (${record.samples.length})`;
    history.replaceState(null, "", `#record=${encodeURIComponent(record.id)}&method=${encodeURIComponent(method)}&variant=${encodeURIComponent(variant)}`);
  }

  $("record").addEventListener("change", drawRecord);
  $("method").addEventListener("change", () => { fillVariants(); drawRecord(); });
  $("variant").addEventListener("change", drawRecord);
  const requested = new URLSearchParams(location.hash.slice(1));
  if (records.has(requested.get("record"))) $("record").value = requested.get("record");
  if (methods.has(requested.get("method"))) $("method").value = requested.get("method");
  fillVariants();
  if (requested.get("variant")) {
    const options = Array.from($("variant").options).map((o) => o.value);
    if (options.includes(requested.get("variant"))) $("variant").value = requested.get("variant");
  }
  if (data.records.length && data.methods.length) drawRecord();

  // --- curves: a plain SVG line chart per group. A chart opens with each method's headline
  // series (payload: ``headline``); its legend holds one row per method, the method's name a
  // toggle for all its lines and its other variants folded under the row until opened
  const palette = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
    "#bcbd22", "#17becf", "#393b79", "#637939"];
  const dashes = ["", "6 3", "2 2", "8 3 2 3"];
  fill($("curve"), data.curves.map((_, i) => String(i)), data.curves.map((c) => c.title));
  let hidden = new Set(), expanded = new Set();
  // the chart's series by method, in the order they first appear
  function byMethod(group) {
    const methods = new Map();
    for (const series of group.series) {
      const method = series.method || "";
      if (!methods.has(method)) methods.set(method, []);
      methods.get(method).push(series);
    }
    return methods;
  }
  // each series' stroke: one colour per method where a chart has several (its variants dashed),
  // one per series where it has one
  function strokes(group) {
    const methods = byMethod(group), found = new Map();
    const several = methods.size > 1;
    [...methods.values()].forEach((members, m) => members.forEach((series, v) => found.set(series.name, several
      ? { colour: palette[m % palette.length], dash: dashes[v % dashes.length] }
      : { colour: palette[v % palette.length], dash: dashes[Math.floor(v / palette.length) % dashes.length] })));
    return found;
  }
  function drawCurve() {
    const chart = $("chart");
    chart.innerHTML = "";
    const group = data.curves[Number($("curve").value)];
    if (!group) { chart.textContent = data.absent.curves; return; }
    const W = 640, H = 380, L = 56, B = 40, T = 32, R = 12;
    const points = group.series.flatMap((s) => s.points);
    const xs = points.map((p) => p[0]), ys = points.map((p) => p[1]);
    let x0 = Math.min(...xs), x1 = Math.max(...xs), y0 = Math.min(...ys), y1 = Math.max(...ys);
    if (x0 === x1) { x0 -= 1; x1 += 1; }
    if (y0 === y1) { y0 -= 1; y1 += 1; }
    const sx = (x) => L + ((x - x0) / (x1 - x0)) * (W - L - R);
    const sy = (y) => H - B - ((y - y0) / (y1 - y0)) * (H - B - T);
    const ns = "http://www.w3.org/2000/svg";
    const svg = document.createElementNS(ns, "svg");
    svg.setAttribute("width", W); svg.setAttribute("height", H);
    const add = (tag, attrs, text) => {
      const node = document.createElementNS(ns, tag);
      for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
      if (text !== undefined) node.textContent = text;
      svg.appendChild(node);
      return node;
    };
    add("line", { x1: L, y1: H - B, x2: W - R, y2: H - B, stroke: "#444" });
    add("line", { x1: L, y1: T, x2: L, y2: H - B, stroke: "#444" });
    for (let i = 0; i <= 4; i++) {
      const xv = x0 + ((x1 - x0) * i) / 4, yv = y0 + ((y1 - y0) * i) / 4;
      add("text", { x: sx(xv), y: H - B + 16, "text-anchor": "middle", "font-size": 11 }, fmt(xv, 2));
      add("text", { x: L - 6, y: sy(yv) + 4, "text-anchor": "end", "font-size": 11 }, fmt(yv, 2));
    }
    add("text", { x: (L + W - R) / 2, y: H - 4, "text-anchor": "middle", "font-size": 12 }, group.x);
    // the y-axis title above the axis, clear of the tick labels
    add("text", { x: L, y: T - 12, "text-anchor": "middle", "font-size": 12 }, group.y);
    const stroke = strokes(group);
    for (const series of group.series) {
      if (hidden.has(series.name)) continue;
      const d = series.points.map((p, j) => `${j ? "L" : "M"}${sx(p[0]).toFixed(1)},${sy(p[1]).toFixed(1)}`).join(" ");
      const { colour, dash } = stroke.get(series.name);
      add("path", { d, fill: "none", stroke: colour, "stroke-width": 1.6, "data-series": series.name,
        ...(dash ? { "stroke-dasharray": dash } : {}) });
    }
    chart.appendChild(svg);
    chart.appendChild(legendOf(group, stroke));
  }
  function legendOf(group, stroke) {
    const legend = el("div", { class: "legend" });
    legend.appendChild(el("p", { class: "hint", text: "Drawn at first: each method's headline variant (the detector table's). "
      + "Click a method's name to hide or show its lines, a variant to hide or show it; open a method's other variants to add them." }));
    const toggle = (names) => {
      const shown = names.filter((name) => !hidden.has(name));
      for (const name of names) if (shown.length) hidden.add(name); else hidden.delete(name);
      drawCurve();
    };
    const item = (series, method) => {
      const off = hidden.has(series.name);
      // the row names the method: a variant's label drops it ("hallucheck: hallucheck_ner_greedy" reads "ner_greedy")
      let label = method && series.name.startsWith(`${method}: `) ? series.name.slice(method.length + 2) : series.name;
      if (method && label.startsWith(`${method}_`)) label = label.slice(method.length + 1);
      const node = el("span", { class: "legend-item", "data-legend": series.name, title: "click: show or hide" });
      // its line as drawn (its method's colour, its dash), hollow while hidden
      const { colour, dash } = stroke.get(series.name);
      const ns = "http://www.w3.org/2000/svg", swatch = document.createElementNS(ns, "svg"), line = document.createElementNS(ns, "line");
      swatch.setAttribute("width", 22); swatch.setAttribute("height", 8); swatch.setAttribute("class", "swatch");
      for (const [k, v] of Object.entries({ x1: 1, x2: 21, y1: 4, y2: 4, stroke: off ? "#bbb" : colour, "stroke-width": off ? 1 : 2.2,
        ...(dash ? { "stroke-dasharray": dash } : {}) })) line.setAttribute(k, v);
      swatch.appendChild(line);
      node.append(swatch, ` ${label}`);
      node.style.color = off ? "#999" : colour;
      node.addEventListener("click", () => toggle([series.name]));
      return node;
    };
    for (const [method, members] of byMethod(group)) {
      const first = members.filter((s) => s.headline);
      const leading = first.length ? first : members.slice(0, 1);
      const more = members.filter((s) => !leading.includes(s));
      const row = el("div", { class: "legend-method", "data-method": method });
      if (method) {
        const name = el("span", { class: "legend-name", text: method, "data-legend-method": method,
          title: "click: hide or show this method's lines" });
        // the method's headline lines back when none of its lines is drawn
        name.addEventListener("click", () => {
          const drawn = members.filter((s) => !hidden.has(s.name)).map((s) => s.name);
          toggle(drawn.length ? drawn : leading.map((s) => s.name));
        });
        row.appendChild(name);
      }
      for (const series of leading) row.appendChild(item(series, method));
      if (more.length) {
        const details = el("details", { class: "legend-more" });
        if (expanded.has(method)) details.open = true;
        details.addEventListener("toggle", () => { if (details.open) expanded.add(method); else expanded.delete(method); });
        const drawnMore = more.filter((s) => !hidden.has(s.name)).length;
        details.appendChild(el("summary", { text: `${more.length} more ${more.length === 1 ? "variant" : "variants"}${drawnMore ? ` (${drawnMore} drawn)` : ""}` }));
        for (const series of more) details.appendChild(item(series, method));
        row.appendChild(details);
      }
      legend.appendChild(row);
    }
    return legend;
  }
  function openCurve() {
    const group = data.curves[Number($("curve").value)];
    hidden = new Set(group ? group.series.filter((s) => !s.headline).map((s) => s.name) : []);
    expanded = new Set();
    drawCurve();
  }
  $("curve").addEventListener("change", openCurve);
  openCurve();

  // --- correction table
  const correction = $("correction");
  if (!data.correction || !data.correction.table3) {
    correction.textContent = data.absent.correction;
  } else {
    const verdicts = ["factual", "non-factual", "refused"];
    const table = el("table", { id: "correction-table" });
    table.appendChild(el("tr", {}, ["level", ...verdicts].map((t) => el("th", { text: t }))));
    for (const [level, row] of Object.entries(data.correction.table3)) {
      table.appendChild(el("tr", {}, [el("td", { text: level }), ...verdicts.map((v) => {
        const change = row[`${v}_change_percent`];
        const text = row[v] === null || row[v] === undefined ? "n/a"
          : fmt(row[v], 2) + (change === null || change === undefined ? "" : ` (${change >= 0 ? "+" : ""}${fmt(change, 1)}%)`);
        return el("td", { class: "num", text });
      })]));
    }
    correction.appendChild(table);
    const details = ["corrector", "judge", "fact_detector"].filter((k) => data.correction[k]).map((k) => `${k}: ${data.correction[k]}`);
    correction.appendChild(el("p", { class: "hint", text: details.join("; ") }));
  }
})();
