/* mas_eval's case viewer. Every value from the data becomes text (textContent), never markup. */
(function () {
  "use strict";
  var doc = document;
  var state = { firstPaint: null, tableRendered: null, opened: null, chunksParsed: 0 };
  window.__masViewer = state;

  function byId(id) { return doc.getElementById(id); }
  function el(tag, cls, text) {
    var node = doc.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }
  function parse(id) { return JSON.parse(byId(id).textContent); }

  var meta = parse("mas-viewer-meta");
  var blob = parse("mas-viewer-cases");
  var S = meta.strings;
  var T = meta.treatment, C = meta.control;

  // A table of columns: names and kinds from the page's meta ("i": interned text, "s": text,
  // "n": number, "b": Boolean); ``key(i)`` names column i in the JSON.
  function Columns(raw, spec, key) {
    this.names = spec.map(function (c) { return c[0]; });
    this.kinds = spec.map(function (c) { return c[1]; });
    this.data = spec.map(function (c, i) { return raw[key ? key(i) : c[0]] || []; });
    this.length = this.data.length ? this.data[0].length : 0;
    this.index = Object.create(null);
    for (var i = 0; i < this.names.length; i++) this.index[this.names[i]] = i;
  }
  Columns.prototype.has = function (name) { return this.index[name] !== undefined; };
  Columns.prototype.at = function (j, row) {
    var v = this.data[j][row];
    if (v === null || v === undefined) return null;
    return this.kinds[j] === "i" ? S[v] : v;
  };
  Columns.prototype.get = function (name, row) {
    var j = this.index[name];
    return j === undefined ? null : this.at(j, row);
  };

  var cases = new Columns(blob.cases, meta.case_columns);
  var runs = new Columns(blob.runs, meta.run_columns);
  var N = cases.length;

  function named(label) {
    return label.replace(/treatment|control/g, function (word) { return word === "treatment" ? T : C; });
  }
  var CLASS_LABELS = meta.classes.map(named);

  // -- numbers -------------------------------------------------------------------------------
  function fmtNumber(v, digits) {
    if (v === null || v === undefined) return "–";
    if (typeof v === "boolean") return v ? "true" : "false";
    if (Number.isInteger(v)) return v.toLocaleString("en-US");
    var a = Math.abs(v);
    if (a !== 0 && (a < 1e-3 || a >= 1e6)) return v.toExponential(2);
    return v.toFixed(digits === undefined ? 3 : digits);
  }
  function fmtScore(v, n) {
    if (v === null || v === undefined) return "–";
    if (meta.pass_fail && (n === 1 || n === undefined) && (v === 0 || v === 1)) return v === 1 ? "passed" : "failed";
    var a = Math.abs(v);
    return a !== 0 && (a < 1e-3 || a >= 1e6) ? v.toExponential(2) : v.toFixed(3);
  }
  function fmtDiff(v) {
    if (v === null || v === undefined) return "–";
    return (v > 0 ? "+" : "") + fmtScore(v, 2);
  }
  function fmtTokens(v) { return v === null || v === undefined ? "–" : Math.round(v).toLocaleString("en-US"); }
  function fmtCost(v) {
    if (v === null || v === undefined) return "–";
    if (v === 0) return "$0";
    return "$" + (v >= 1 ? v.toFixed(2) : Number(v.toPrecision(2)).toString());
  }
  function fmtSeconds(v) { return v === null || v === undefined ? "–" : fmtNumber(v, 2) + " s"; }

  // -- the table's columns ---------------------------------------------------------------------
  function any(name) {
    var j = cases.index[name];
    if (j === undefined) return false;
    var col = cases.data[j];
    for (var i = 0; i < col.length; i++) if (col[i] !== null) return true;
    return false;
  }
  // The table's columns; those of one system sit together under its name (``group``).
  var COLS = [{ key: "#", label: "#", width: 44, num: true, group: null, value: function (i) { return i; },
                text: function (i) { return String(i + 1); } }];
  function caseColumn(key, label, width, num, fmt, group) {
    COLS.push({ key: key, label: label, width: width, num: num, group: group || null,
                value: function (i) { return cases.get(key, i); },
                text: function (i) { return fmt(cases.get(key, i), i); } });
  }
  caseColumn("case", meta.pair_on, 130, false, function (v) { return v === null ? "–" : v; });
  if (any("task")) caseColumn("task", "task", 95, false, function (v) { return v === null ? "–" : v; });
  COLS.push({ key: "discordance", label: "class", width: 215, num: false, badge: true, group: null,
              value: function (i) { return cases.get("discordance", i); },
              text: function (i) { return CLASS_LABELS[cases.get("discordance", i)]; } });
  caseColumn("difference", "difference", 92, true, fmtDiff);
  var withTokens = any("tokens_treatment") || any("tokens_control");
  var withCost = any("cost_treatment") || any("cost_control");
  [["treatment", T], ["control", C]].forEach(function (side) {
    var tag = side[0], group = side[1];
    caseColumn("score_" + tag, meta.metric, 85, true,
               function (v, i) { return fmtScore(v, cases.get("runs_" + tag, i)); }, group);
    if (meta.epochs) caseColumn("runs_" + tag, "runs", 48, true, fmtTokens, group);
    if (withTokens) caseColumn("tokens_" + tag, "tokens", 72, true, fmtTokens, group);
    if (withCost) caseColumn("cost_" + tag, "cost", 84, true, fmtCost, group);
  });

  // -- which cases are shown, in which order ----------------------------------------------------
  var view = { order: null, cls: "all", query: "", deep: false, sortKey: null, sortDir: 1, selected: -1 };
  var hay = null;
  var deepHits = null;

  function haystack() {
    if (hay) return hay;
    hay = new Array(N);
    for (var i = 0; i < N; i++) {
      hay[i] = [cases.get("case", i), cases.get("task", i), cases.get("target", i), cases.get("truth", i)]
        .filter(function (x) { return x !== null; }).join("\n").toLowerCase();
    }
    return hay;
  }

  function classMatches(code) {
    if (view.cls === "all") return true;
    if (view.cls === "discordant") return code <= 3;
    return code === view.cls;
  }

  function recompute() {
    var q = view.query.trim().toLowerCase();
    var h = q ? haystack() : null;
    var hits = q && view.deep ? transcriptHits(q) : null;
    var out = [];
    for (var i = 0; i < N; i++) {
      if (!classMatches(cases.get("discordance", i))) continue;
      if (q && h[i].indexOf(q) < 0 && !(hits && hits[i])) continue;
      out.push(i);
    }
    if (view.sortKey !== null) {
      var col = COLS[view.sortKey], dir = view.sortDir;
      out.sort(function (a, b) {
        var x = col.value(a), y = col.value(b);
        if (x === y) return a - b;
        if (x === null) return 1;
        if (y === null) return -1;
        return (x < y ? -1 : 1) * dir;
      });
    }
    view.order = out;
    byId("shown").textContent = out.length.toLocaleString("en-US") + " of " + N.toLocaleString("en-US") + " cases";
    var wrap = byId("table-wrap");
    wrap.scrollTop = 0;
    renderRows();
  }

  // -- the table, virtually scrolled: only the rows in view are in the document ------------------
  var rowHeight = 28, OVERSCAN = 8;
  var wrap = byId("table-wrap"), tbody = byId("rows"), head = byId("head"), colgroup = byId("cols");
  var thead = byId("cases").tHead;

  function buildHead() {
    var total = COLS.reduce(function (sum, col) { return sum + col.width; }, 0);
    var groups = byId("groups"), last = null;
    COLS.forEach(function (col, k) {
      var c = el("col");
      c.style.width = (100 * col.width / total).toFixed(2) + "%";
      colgroup.appendChild(c);
      if (last !== null && col.group === last.group) {
        last.th.colSpan += 1;
      } else {
        var cell = el("th", col.group === null ? "" : "group " + (col.group === T ? "treatment" : "control"), col.group);
        if (col.group !== null) cell.title = col.group;
        groups.appendChild(cell);
        last = { group: col.group, th: cell };
      }
      var th = el("th", col.num ? "num" : "", col.label);
      th.setAttribute("scope", "col");
      th.title = (col.group ? col.group + ": " : "") + col.label + " (click to sort)";
      th.addEventListener("click", function () {
        if (view.sortKey === k) view.sortDir = -view.sortDir; else { view.sortKey = k; view.sortDir = 1; }
        Array.prototype.forEach.call(head.children, function (other, j) {
          if (j === k) other.setAttribute("aria-sort", view.sortDir > 0 ? "ascending" : "descending");
          else other.removeAttribute("aria-sort");
        });
        recompute();
      });
      head.appendChild(th);
    });
  }

  var spacers = [el("tr", "spacer"), el("tr", "spacer")];
  spacers.forEach(function (tr) { var td = el("td"); td.colSpan = COLS.length; tr.appendChild(td); });
  function spacer(k, height) {
    spacers[k].firstChild.style.height = height + "px";
    return spacers[k];
  }

  function row(i) {
    var tr = el("tr", "row" + (i === view.selected ? " selected" : ""));
    tr.dataset.case = String(i);
    for (var k = 0; k < COLS.length; k++) {
      var col = COLS[k], td = el("td", col.num ? "num" : "");
      if (col.badge) {
        var code = cases.get("discordance", i);
        td.appendChild(el("span", "badge cls-" + code, col.text(i)));
      } else {
        td.textContent = col.text(i);
      }
      tr.appendChild(td);
    }
    return tr;
  }

  // The rows drawn, by case: a row that stays in view stays the same element while scrolling.
  var live = new Map(), drawn = null;
  var pending = false;
  function renderRows() {
    pending = false;
    var order = view.order, total = order.length;
    var headHeight = thead.getBoundingClientRect().height;
    var top = Math.max(0, wrap.scrollTop - headHeight);
    var first = Math.max(0, Math.floor(top / rowHeight) - OVERSCAN);
    var last = Math.min(total, Math.ceil((top + wrap.clientHeight) / rowHeight) + OVERSCAN);
    if (drawn && drawn.order === order && drawn.first === first && drawn.last === last && drawn.height === rowHeight) return;
    drawn = { order: order, first: first, last: last, height: rowHeight };
    var next = new Map(), nodes = [spacer(0, first * rowHeight)];
    for (var p = first; p < last; p++) {
      var i = order[p], tr = live.get(i) || row(i);
      next.set(i, tr);
      nodes.push(tr);
    }
    nodes.push(spacer(1, (total - last) * rowHeight));
    live = next;
    if (total === 0) {
      var empty = el("tr"), td = el("td", "none", "No case matches.");
      td.colSpan = COLS.length;
      empty.appendChild(td);
      nodes.push(empty);
    }
    tbody.replaceChildren.apply(tbody, nodes);
  }
  function schedule() {
    if (!pending) { pending = true; requestAnimationFrame(renderRows); }
  }

  function measureRows() {
    var sample = tbody.querySelector("tr.row");
    if (!sample) return;
    var h = sample.getBoundingClientRect().height;
    if (h > 0 && Math.abs(h - rowHeight) > 0.5) { rowHeight = h; renderRows(); }
  }

  function scrollToPosition(p) {
    var headHeight = thead.getBoundingClientRect().height;
    var y = p * rowHeight;
    if (y < wrap.scrollTop) wrap.scrollTop = y;
    else if (y + rowHeight + headHeight > wrap.scrollTop + wrap.clientHeight) {
      wrap.scrollTop = y + rowHeight + headHeight - wrap.clientHeight;
    }
  }

  // -- the class filter and the search ------------------------------------------------------------
  function buildControls() {
    var counts = new Array(CLASS_LABELS.length).fill(0);
    for (var i = 0; i < N; i++) counts[cases.get("discordance", i)] += 1;
    var box = byId("classes");
    var discordant = counts[0] + counts[1] + counts[2] + counts[3];
    var buttons = [["all", "all (" + N.toLocaleString("en-US") + ")"]];
    if (discordant) buttons.push(["discordant", "the systems differ (" + discordant.toLocaleString("en-US") + ")"]);
    counts.forEach(function (n, code) {
      if (n) buttons.push([code, CLASS_LABELS[code] + " (" + n.toLocaleString("en-US") + ")"]);
    });
    buttons.forEach(function (b) {
      var button = el("button", "", b[1]);
      button.type = "button";
      button.dataset.cls = String(b[0]);
      button.setAttribute("aria-pressed", b[0] === view.cls ? "true" : "false");
      button.addEventListener("click", function () {
        view.cls = b[0];
        Array.prototype.forEach.call(box.children, function (other) {
          other.setAttribute("aria-pressed", other === button ? "true" : "false");
        });
        recompute();
      });
      box.appendChild(button);
    });
    var timer = null;
    byId("search").addEventListener("input", function (event) {
      clearTimeout(timer);
      timer = setTimeout(function () { view.query = event.target.value; recompute(); }, 150);
    });
    var deep = byId("search-transcripts");
    if (!meta.tables.some(function (t) { return t.key === "messages"; })) deep.parentNode.hidden = true;
    deep.addEventListener("change", function () {
      view.deep = deep.checked;
      if (view.query.trim()) {
        byId("shown").textContent = "searching the transcripts…";
        setTimeout(recompute, 20);
      }
    });
  }

  // -- the runs' tables, parsed a chunk at a time -----------------------------------------------
  var chunks = Object.create(null);
  var TABLES = Object.create(null);
  meta.tables.forEach(function (t) { TABLES[t.key] = t; });

  function chunk(k) {
    if (chunks[k]) return chunks[k];
    var node = byId("mas-viewer-chunk-" + k);
    if (!node) return null;  // the page is still being read
    var raw = JSON.parse(node.textContent);
    var parsed = Object.create(null);
    meta.tables.forEach(function (t) {
      var data = raw[t.key];
      if (!data) return;
      var cols = new Columns(data, t.columns, function (i) { return "c" + i; });
      cols.runs = data._r;
      parsed[t.key] = cols;
    });
    chunks[k] = parsed;
    state.chunksParsed += 1;
    return parsed;
  }

  function lowerBound(arr, value) {
    var lo = 0, hi = arr.length;
    while (lo < hi) { var mid = (lo + hi) >> 1; if (arr[mid] < value) lo = mid + 1; else hi = mid; }
    return lo;
  }

  // The rows of table ``key`` of run ``r``: [columns, first row, end], or null when it has none.
  function rowsOf(key, r) {
    var parsed = chunk(Math.floor(r / meta.chunk_runs));
    if (parsed === null) return undefined;
    var t = parsed[key];
    if (!t) return null;
    var local = r % meta.chunk_runs;
    var a = lowerBound(t.runs, local), b = lowerBound(t.runs, local + 1);
    return a < b ? [t, a, b] : null;
  }

  function transcriptHits(q) {
    var t = TABLES.messages;
    if (!t) return null;
    var hits = new Uint8Array(N);
    var textColumn = t.columns.findIndex(function (c) { return c[0] === "text"; });
    for (var k = 0; k < meta.chunks; k++) {
      var parsed = chunk(k);
      if (!parsed || !parsed.messages) continue;
      var m = parsed.messages;
      if (!m.lower) m.lower = m.data[textColumn].map(function (x) { return x === null ? "" : String(m.kinds[textColumn] === "i" ? S[x] : x).toLowerCase(); });
      for (var j = 0; j < m.length; j++) {
        if (m.lower[j].indexOf(q) >= 0) hits[runs.get("case", k * meta.chunk_runs + m.runs[j])] = 1;
      }
    }
    return hits;
  }

  // -- a case, opened ----------------------------------------------------------------------------
  var PALETTE = ["#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9", "#d55e00", "#7f7f7f", "#b8a000"];
  var ROLES = { system: 1, user: 1, assistant: 1, tool: 1 };
  // The tables of a run open from the start: what its family decided on (beliefs, labels, answers).
  var OPEN = { beliefs: 1, labels: 1, answers: 1, items: 1 };

  function fact(dl, name, value) {
    if (value === null || value === undefined || value === "") return;
    dl.appendChild(el("dt", "", name));
    dl.appendChild(el("dd", "", value));
  }

  function sideRuns(i, side) {
    var start = cases.get(side === 0 ? "t_start" : "c_start", i);
    var count = cases.get(side === 0 ? "t_count" : "c_count", i);
    var out = [];
    if (start === null || count === null) return out;
    for (var r = start; r < start + count; r++) out.push(r);
    return out;
  }

  // The run shown first: for the side that did better, its best run; for the other, its worst.
  function firstRun(list, code, side) {
    if (!list.length) return null;
    var better = code === 0 || code === 2 ? 0 : code === 1 || code === 3 ? 1 : -1;
    if (better < 0) return list[0];
    var best = list[0];
    list.forEach(function (r) {
      var v = runs.get("value", r), w = runs.get("value", best);
      if (v === null) return;
      if (w === null || (side === better ? v > w : v < w)) best = r;
    });
    return best;
  }

  function openCase(i) {
    view.selected = i;
    state.opened = i;
    Array.prototype.forEach.call(tbody.querySelectorAll("tr.row"), function (tr) {
      tr.classList.toggle("selected", Number(tr.dataset.case) === i);
    });
    var detail = byId("detail");
    detail.hidden = false;
    var code = cases.get("discordance", i);
    var title = el("h2");
    title.appendChild(doc.createTextNode(meta.pair_on + " " + cases.get("case", i) + " "));
    title.appendChild(el("span", "badge cls-" + code, CLASS_LABELS[code]));
    var facts = el("div", "case-facts");
    [["task", cases.get("task", i)], ["target", cases.get("target", i)], ["ground truth", cases.get("truth", i)],
     [meta.metric + ", difference", fmtDiff(cases.get("difference", i))]].forEach(function (pair) {
      if (pair[1] === null || pair[1] === undefined) return;
      var line = el("div");
      line.appendChild(el("span", "label", pair[0] + ":"));
      line.appendChild(el("span", "value", pair[1]));
      facts.appendChild(line);
    });
    var panes = el("div", "panes");
    panes.appendChild(pane(i, 0, code));
    panes.appendChild(pane(i, 1, code));
    detail.replaceChildren(title, facts, panes);
    try { history.replaceState(null, "", "#case=" + encodeURIComponent(cases.get("case", i))); } catch (e) { /* file: pages may refuse */ }
  }

  function pane(i, side, code) {
    var box = el("div", "pane " + (side === 0 ? "treatment" : "control"));
    box.dataset.side = side === 0 ? "treatment" : "control";
    var system = side === 0 ? T : C;
    var head = el("h3");
    head.appendChild(el("span", "", system + ": "));
    var score = cases.get(side === 0 ? "score_treatment" : "score_control", i);
    var n = cases.get(side === 0 ? "runs_treatment" : "runs_control", i);
    head.appendChild(scoreNode(score, n));
    box.appendChild(head);
    var list = sideRuns(i, side);
    if (!list.length) {
      box.appendChild(el("p", "none", "No run of " + system + " on this case."));
      return box;
    }
    var body = el("div", "run");
    if (list.length > 1) {
      var select = el("select");
      select.setAttribute("aria-label", "run of " + system);
      list.forEach(function (r) {
        var epoch = runs.get("epoch", r);
        var label = (epoch !== null ? "epoch " + epoch : "run " + runs.get("run_id", r)) + " · " +
                    meta.metric + " " + fmtScore(runs.get("value", r), 1) +
                    (runs.get("tokens", r) !== null ? " · " + fmtTokens(runs.get("tokens", r)) + " tokens" : "");
        var option = el("option", "", label);
        option.value = String(r);
        select.appendChild(option);
      });
      var chosen = firstRun(list, code, side);
      select.value = String(chosen);
      select.addEventListener("change", function () { renderRun(body, Number(select.value)); });
      box.appendChild(select);
      renderRun(body, chosen);
    } else {
      renderRun(body, list[0]);
    }
    box.appendChild(body);
    return box;
  }

  function scoreNode(v, n) {
    var text = fmtScore(v, n);
    var span = el("span", text === "passed" ? "pass" : text === "failed" ? "fail" : "", meta.metric + " " + text);
    return span;
  }

  function renderRun(body, r) {
    body.replaceChildren();
    body.dataset.run = String(r);
    var dl = el("dl", "facts");
    fact(dl, "run", runs.get("run_id", r));
    fact(dl, "epoch", runs.get("epoch", r));
    fact(dl, meta.metric, fmtScore(runs.get("value", r), 1));
    if (runs.get("tokens", r) !== null) fact(dl, "tokens", fmtTokens(runs.get("tokens", r)));
    if (runs.get("cost", r) !== null) fact(dl, "cost", fmtCost(runs.get("cost", r)));
    meta.facts.forEach(function (name) {
      var v = runs.get(name, r);
      fact(dl, name, name === "seconds" ? fmtSeconds(v) : typeof v === "number" ? fmtNumber(v) : v);
    });
    body.appendChild(dl);
    var scores = meta.score_names.map(function (name, k) { return [name, runs.get("s" + k, r)]; })
      .filter(function (pair) { return pair[1] !== null; });
    if (scores.length) {
      var details = el("details");
      details.appendChild(el("summary", "", "Scores of the run (" + scores.length + ")"));
      var table = el("table", "data");
      scores.forEach(function (pair) {
        var tr = el("tr");
        tr.appendChild(el("th", "", pair[0]));
        tr.appendChild(el("td", "num", fmtNumber(pair[1])));
        table.appendChild(tr);
      });
      details.appendChild(table);
      body.appendChild(details);
    }
    if (rowsOf("messages", r) === undefined) {
      body.appendChild(el("p", "none", "The page is still being read…"));
      doc.addEventListener("DOMContentLoaded", function () { renderRun(body, r); }, { once: true });
      return;
    }
    var outcomes = rowsOf("outcomes", r);
    if (outcomes) body.appendChild(section("Scorer", genericTable(outcomes, "name", meta.metric)));
    transcript(body, r);
    meta.tables.forEach(function (t) {
      if (t.key === "messages" || t.key === "outcomes" || (t.key === "tool_calls" && TABLES.messages)) return;
      var rows = rowsOf(t.key, r);
      if (!rows) return;
      var details = el("details");
      if (rows[2] - rows[1] <= 12 || OPEN[t.key] === 1) details.open = true;
      details.appendChild(el("summary", "", t.title + " (" + (rows[2] - rows[1]) + ")"));
      details.appendChild(t.key === "beliefs" ? beliefTable(rows) : genericTable(rows));
      body.appendChild(details);
    });
  }

  function section(title, content) {
    var box = el("div", "section");
    box.appendChild(el("h4", "", title));
    box.appendChild(content);
    return box;
  }

  function cellText(t, j, row) {
    var v = t.at(j, row);
    if (v === null) return "";
    if (t.kinds[j] === "n" && /cost_usd$/.test(t.names[j])) return fmtCost(v);
    if (t.kinds[j] === "n") return fmtNumber(v);
    if (t.kinds[j] === "b") return v ? "true" : "false";
    return String(v);
  }

  function genericTable(rows, markColumn, markValue) {
    var t = rows[0];
    var shown = [];
    for (var j = 0; j < t.names.length; j++) {
      for (var p = rows[1]; p < rows[2]; p++) if (t.data[j][p] !== null) { shown.push(j); break; }
    }
    var box = el("div", "scroll");
    var table = el("table", "data");
    var tr = el("tr");
    shown.forEach(function (j) { tr.appendChild(el("th", t.kinds[j] === "n" ? "num" : "", t.names[j])); });
    var thead = el("thead");
    thead.appendChild(tr);
    table.appendChild(thead);
    var tbodyNode = el("tbody");
    var mark = markColumn ? t.index[markColumn] : undefined;
    for (var p2 = rows[1]; p2 < rows[2]; p2++) {
      var line = el("tr");
      if (mark !== undefined && t.at(mark, p2) === markValue) line.className = "metric";
      shown.forEach(function (j) {
        line.appendChild(el("td", t.kinds[j] === "n" ? "num" : "text", cellText(t, j, p2)));
      });
      tbodyNode.appendChild(line);
    }
    table.appendChild(tbodyNode);
    box.appendChild(table);
    return box;
  }

  // Beliefs as agents × alternatives: each agent's mass on each alternative.
  function beliefTable(rows) {
    var t = rows[0], agents = [], alternatives = [], mass = Object.create(null);
    for (var p = rows[1]; p < rows[2]; p++) {
      var a = String(t.get("agent_id", p)), alt = String(t.get("alternative", p));
      if (agents.indexOf(a) < 0) agents.push(a);
      if (alternatives.indexOf(alt) < 0) alternatives.push(alt);
      mass[a + "\u0000" + alt] = t.get("mass", p);
    }
    var box = el("div", "scroll"), table = el("table", "data"), tr = el("tr");
    tr.appendChild(el("th", "", "agent"));
    alternatives.forEach(function (alt) { tr.appendChild(el("th", "num", alt)); });
    table.appendChild(tr);
    agents.forEach(function (a) {
      var line = el("tr");
      line.appendChild(el("th", "", a));
      alternatives.forEach(function (alt) {
        var v = mass[a + "\u0000" + alt];
        line.appendChild(el("td", "num", v === undefined ? "" : fmtNumber(v)));
      });
      table.appendChild(line);
    });
    box.appendChild(table);
    return box;
  }

  function prettyArguments(text) {
    try { return JSON.stringify(JSON.parse(text), null, 2); } catch (e) { return text; }
  }

  function toolNode(t, p) {
    var box = el("div", "tool");
    var head = el("div", "msg-head");
    head.appendChild(el("span", "agent", "tool " + (t.get("tool", p) || "")));
    [["agent", t.get("agent_id", p)], ["call", t.get("turn", p)], ["", t.get("seconds", p) === null ? null : fmtSeconds(t.get("seconds", p))]]
      .forEach(function (pair) { if (pair[1] !== null) head.appendChild(el("span", "", (pair[0] ? pair[0] + " " : "") + pair[1])); });
    box.appendChild(head);
    var args = t.get("arguments", p);
    if (args !== null) box.appendChild(el("pre", "", prettyArguments(String(args))));
    var error = t.get("error", p);
    if (error !== null) box.appendChild(el("div", "error", "error: " + error));
    return box;
  }

  function transcript(body, r) {
    var messages = rowsOf("messages", r);
    var tools = rowsOf("tool_calls", r);
    var box = el("div", "transcript");
    if (!messages && !tools) {
      if (TABLES.messages) body.appendChild(section("Transcript", el("p", "none", "No message recorded for this run.")));
      return;
    }
    // Tool calls go under the message that asked for them (agent and turn), the others after the transcript.
    var byMessage = Object.create(null), loose = [];
    if (tools) {
      var tt = tools[0];
      for (var q = tools[1]; q < tools[2]; q++) {
        var asked = tt.get("message_turn", q);
        if (asked === null || !messages) { loose.push(q); continue; }
        var key = tt.get("agent_id", q) + "\u0000" + asked;
        (byMessage[key] = byMessage[key] || []).push(q);
      }
    }
    var colours = Object.create(null), used = 0;
    if (messages) {
      var m = messages[0];
      for (var p = messages[1]; p < messages[2]; p++) {
        var agent = m.get("agent_id", p), role = m.get("role", p), source = m.get("source", p);
        var node = el("div", "msg");
        if (role !== null && ROLES[role] === 1) node.classList.add("r-" + role);
        else if (source === "input") node.classList.add("r-input");
        if (colours[agent] === undefined) colours[agent] = PALETTE[used++ % PALETTE.length];
        node.style.borderLeftColor = colours[agent];
        var head = el("div", "msg-head");
        head.appendChild(el("span", "agent", agent));
        var tokensIn = m.get("input_tokens", p), tokensOut = m.get("output_tokens", p);
        [["role", role], ["round", m.get("round", p)], ["turn", m.get("turn", p)], ["", source], ["", m.get("model", p)],
         ["tokens", tokensIn === null && tokensOut === null ? null : fmtTokens(tokensIn) + " in / " + fmtTokens(tokensOut) + " out"],
         ["", m.get("seconds", p) === null ? null : fmtSeconds(m.get("seconds", p))]]
          .forEach(function (pair) { if (pair[1] !== null) head.appendChild(el("span", "", (pair[0] ? pair[0] + " " : "") + pair[1])); });
        node.appendChild(head);
        var text = el("div", "msg-text", m.get("text", p));
        text.setAttribute("dir", "auto");
        node.appendChild(text);
        var asking = byMessage[agent + "\u0000" + m.get("turn", p)];
        if (asking) {
          asking.forEach(function (q2) { node.appendChild(toolNode(tools[0], q2)); });
          delete byMessage[agent + "\u0000" + m.get("turn", p)];
        }
        box.appendChild(node);
      }
    }
    Object.keys(byMessage).forEach(function (key) { loose = loose.concat(byMessage[key]); });
    if (loose.length) {
      loose.sort(function (a, b) { return a - b; });
      box.appendChild(el("h4", "", "Tool calls not tied to a message"));
      loose.forEach(function (q3) { box.appendChild(toolNode(tools[0], q3)); });
    }
    body.appendChild(section("Transcript (" + (messages ? messages[2] - messages[1] : 0) + " messages)", box));
  }

  // -- events ----------------------------------------------------------------------------------------
  wrap.addEventListener("scroll", schedule, { passive: true });
  window.addEventListener("resize", schedule);
  tbody.addEventListener("click", function (event) {
    var tr = event.target.closest("tr.row");
    if (tr) openCase(Number(tr.dataset.case));
  });
  wrap.addEventListener("keydown", function (event) {
    var order = view.order;
    if (!order.length) return;
    var at = order.indexOf(view.selected);
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      at = event.key === "ArrowDown" ? Math.min(order.length - 1, at + 1) : Math.max(0, at - 1);
      scrollToPosition(at);
      openCase(order[at]);
      renderRows();
      event.preventDefault();
    } else if (event.key === "Enter" && at < 0) {
      openCase(order[0]);
    }
  });

  buildHead();
  buildControls();
  recompute();
  measureRows();
  state.tableRendered = performance.now();
  performance.mark("mas-viewer-table");
  requestAnimationFrame(function () { setTimeout(function () { state.firstPaint = performance.now(); }, 0); });

  function openFromHash() {
    var match = /^#case=(.*)$/.exec(location.hash);
    if (!match) return;
    var wanted;
    try { wanted = decodeURIComponent(match[1]); } catch (e) { return; }
    for (var i = 0; i < N; i++) if (cases.get("case", i) === wanted) { openCase(i); return; }
  }
  if (doc.readyState === "loading") doc.addEventListener("DOMContentLoaded", openFromHash); else openFromHash();
})();
