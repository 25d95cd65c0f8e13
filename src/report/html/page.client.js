// The report page's own script: draws every chart from the JSON in #report-data with Chart.js (inlined before
// this script). Runs offline from a file; everything it shows comes from that JSON, and text reaches the page only
// as canvas text or textContent, never as markup.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("report-data").textContent);
  var palette = data.palette;

  Chart.defaults.animation = false;
  Chart.defaults.font.family = getComputedStyle(document.documentElement).fontFamily;
  Chart.defaults.font.size = 11.5;
  Chart.defaults.color = "#59636e";

  function colour(series, style) {
    if (style === "marker") return "#c62828";
    return series < 0 ? "#8c959f" : palette[series % palette.length];
  }

  var STYLES = {
    line: { showLine: true, pointRadius: 3, borderWidth: 2 },
    points: { showLine: false, pointRadius: 4.5, borderWidth: 1 },
    dashed: { showLine: true, pointRadius: 2, borderWidth: 1.5, borderDash: [6, 4] },
    fit: { showLine: true, pointRadius: 0, borderWidth: 1.5, borderDash: [6, 4] },
    marker: { showLine: false, pointRadius: 8, pointStyle: "crossRot", borderWidth: 2 },
    reference: { showLine: true, pointRadius: 0, borderWidth: 1, borderDash: [2, 3] },
    bar: { type: "bar", borderWidth: 1 },
    // A shaded band (a timeline's steady-state window): the area under its two top corners.
    window: { showLine: true, pointRadius: 0, borderWidth: 0, fill: "origin" },
  };
  // A stack's parts in shades of the run's colour (device full, host and storage lighter).
  var SHADES = ["", "aa", "55"];

  function toDataset(d) {
    var c = colour(d.series, d.style);
    var fill = d.style === "window" ? c + "33" : d.shade ? c + SHADES[d.shade % SHADES.length] : c;
    var ds = { label: d.label, data: d.data, borderColor: c, backgroundColor: fill, wbStyle: d.style };
    if (d.stack !== undefined) ds.stack = d.stack;
    if (d.axis) ds.yAxisID = d.axis;
    var style = STYLES[d.style] || STYLES.line;
    for (var k in style) ds[k] = style[k];
    return ds;
  }

  function axis(a, stacked) {
    var ax = { type: a.type, title: { display: true, text: a.title }, grid: { color: "#eef1f4" } };
    if (stacked) ax.stacked = true;
    // A log axis labels only 1, 2 and 5 of each decade: every tick's label would overlap.
    if (a.type === "logarithmic") {
      ax.ticks = {
        autoSkip: true,
        maxRotation: 0,
        callback: function (v) {
          var lead = v / Math.pow(10, Math.floor(Math.log10(v) + 1e-9));
          return [1, 2, 5].some(function (d) { return Math.abs(lead - d) < 1e-6; }) ? Number(v).toLocaleString("en-US") : "";
        },
      };
    }
    // Named ticks (a history trend: x is the run's place): one per run, whatever Chart.js would choose.
    if (a.labels) {
      var names = a.labels;
      ax.afterBuildTicks = function (scale) {
        scale.ticks = names.map(function (_, i) { return { value: i }; });
      };
      ax.ticks = { autoSkip: true, callback: function (v) { return names[v] === undefined ? "" : names[v]; } };
    }
    if (a.min !== undefined) ax.min = a.min;
    if (a.max !== undefined) ax.max = a.max;
    return ax;
  }

  function fmt(v) {
    return Math.abs(v) >= 100 || Number.isInteger(v) ? String(Math.round(v * 100) / 100) : v.toPrecision(4);
  }

  function scales(spec) {
    var s = { x: axis(spec.x, spec.stacked), y: axis(spec.y, spec.stacked) };
    if (spec.y2) {
      s.y2 = axis(spec.y2, false);
      s.y2.position = "right";
      s.y2.grid = { drawOnChartArea: false };
    }
    return s;
  }

  var charts = {};
  data.charts.forEach(function (spec) {
    var canvas = document.getElementById("chart-" + spec.id);
    charts[spec.id] = new Chart(canvas, {
      // Stacked bars need a bar chart; every other chart is x/y points.
      type: spec.stacked ? "bar" : "scatter",
      data: { datasets: spec.datasets.map(toDataset) },
      options: {
        responsive: true,
        maintainAspectRatio: false,
        interaction: { mode: "nearest", intersect: false },
        scales: scales(spec),
        plugins: {
          legend: {
            display: spec.legend !== false,
            position: "bottom",
            labels: {
              boxWidth: 12,
              filter: function (item, chartData) {
                return chartData.datasets[item.datasetIndex].wbStyle !== "fit";
              },
            },
          },
          tooltip: {
            callbacks: {
              label: function (ctx) {
                var names = spec.x.labels;
                var x = names && names[ctx.parsed.x] !== undefined ? names[ctx.parsed.x] : fmt(ctx.parsed.x);
                return ctx.dataset.label + ": (" + x + ", " + fmt(ctx.parsed.y) + ")";
              },
            },
          },
        },
      },
    });
    if (spec.byPct || spec.byLine) {
      var select = document.getElementById("select-" + spec.id);
      var sets = spec.byPct ? spec.byPct.datasets : spec.byLine.datasets;
      select.addEventListener("change", function () {
        var chart = charts[spec.id];
        chart.data.datasets = (sets[select.value] || []).map(toDataset);
        chart.update();
      });
    }
  });

  // Swim lanes (an agentic replay's sessions): drawn here on a plain canvas, not by Chart.js - thousands of bars on
  // rows whose height grows with the sessions, one pass. What was drawn is kept in window.warmbenchLanes.
  var HIT_STOPS = [[0, [215, 48, 39]], [0.5, [254, 224, 139]], [1, [26, 152, 80]]];
  function hitColour(h) {
    if (h === null || h === undefined) return "#c2c8ce";
    h = Math.max(0, Math.min(1, h));
    for (var i = 1; i < HIT_STOPS.length; i++) {
      var a = HIT_STOPS[i - 1], b = HIT_STOPS[i];
      if (h <= b[0]) {
        var f = (h - a[0]) / (b[0] - a[0]);
        return "rgb(" + [0, 1, 2].map(function (k) { return Math.round(a[1][k] + f * (b[1][k] - a[1][k])); }).join(",") + ")";
      }
    }
    return "rgb(26,152,80)";
  }
  function niceStep(span, ticks) {
    var raw = span / ticks, p = Math.pow(10, Math.floor(Math.log10(raw)));
    return [1, 2, 5, 10].map(function (m) { return m * p; }).find(function (s) { return s >= raw; });
  }

  function drawLanes(spec) {
    var canvas = document.getElementById("lanes-" + spec.id);
    var many = spec.rows.length > 60;
    // Thin bars when there are many sessions: 200 sessions stay one scroll of the page.
    var SLOT = many ? 4 : 9, GAP = many ? 2 : 5, LABEL_W = 130, AXIS_H = 22, RIGHT = 12;
    var rows = [], top = AXIS_H;
    spec.rows.forEach(function (r) {
      var h = r[1] * SLOT;
      rows.push({ label: r[0], slots: r[1], top: top, height: h });
      top += h + GAP;
    });
    var height = top + 4;
    var width = canvas.parentElement.clientWidth;
    var ratio = window.devicePixelRatio || 1;
    canvas.style.width = width + "px";
    canvas.style.height = height + "px";
    canvas.width = Math.round(width * ratio);
    canvas.height = Math.round(height * ratio);
    var g = canvas.getContext("2d");
    g.setTransform(ratio, 0, 0, ratio, 0, 0);
    g.clearRect(0, 0, width, height);
    var span = spec.spanS > 0 ? spec.spanS : 1;
    var plotW = Math.max(10, width - LABEL_W - RIGHT);
    var xOf = function (s) { return LABEL_W + (s / span) * plotW; };
    g.font = "11px " + Chart.defaults.font.family;
    g.textBaseline = "middle";
    // Alternate row shading; a row's label where it fits: at least LABEL_PITCH below the last one drawn (11 px text
    // and a pixel), so thin rows are named every other or every third row and labels never overlap, whatever the
    // rows' heights (a row with subagents is taller than the next).
    var LABEL_PITCH = 12, lastLabelY = -Infinity;
    rows.forEach(function (r, i) {
      if (i % 2 === 1) { g.fillStyle = "#f6f8fa"; g.fillRect(LABEL_W, r.top - GAP / 2, plotW, r.height + GAP); }
      var labelY = r.top + SLOT / 2;
      r.labelY = null;
      if (labelY - lastLabelY >= LABEL_PITCH) {
        g.fillStyle = "#59636e";
        g.textAlign = "right";
        g.fillText(r.label, LABEL_W - 6, labelY, LABEL_W - 10);
        r.labelY = labelY;
        lastLabelY = labelY;
      }
    });
    var step = niceStep(span, Math.max(2, Math.floor(plotW / 90)));
    g.textAlign = "center";
    for (var t = 0; t <= span + 1e-9; t += step) {
      var x = xOf(t);
      g.strokeStyle = "#e4e8ec";
      g.beginPath(); g.moveTo(x, AXIS_H - 4); g.lineTo(x, height - 4); g.stroke();
      g.fillStyle = "#59636e";
      g.fillText(String(Math.round(t * 1000) / 1000) + (t === 0 ? " s" : ""), x, AXIS_H / 2);
    }
    var drawn = [];
    spec.bars.forEach(function (b) {
      var r = rows[b[0]];
      var x0 = xOf(b[2]), x1 = Math.max(x0 + 1, xOf(b[3]));
      var y = r.top + b[1] * SLOT;
      var colour = hitColour(b[4]);
      g.fillStyle = colour;
      g.fillRect(x0, y, x1 - x0, SLOT - 1);
      drawn.push({ row: b[0], slot: b[1], fromS: b[2], toS: b[3], hit: b[4], chain: b[5], turn: b[6], x0: x0, x1: x1, y: y, colour: colour });
    });
    canvas.onmousemove = function (e) {
      var box = canvas.getBoundingClientRect(), mx = e.clientX - box.left, my = e.clientY - box.top;
      var hit = drawn.find(function (d) { return mx >= d.x0 - 1 && mx <= d.x1 + 1 && my >= d.y && my <= d.y + SLOT; });
      canvas.title = hit
        ? rows[hit.row].label + " " + (hit.chain || "root") + " turn " + hit.turn + ": " + fmt(hit.fromS) + "-" + fmt(hit.toS) + " s, hit " + (hit.hit === null ? "none" : fmt(hit.hit))
        : "";
    };
    return { rows: rows, bars: drawn, width: width, height: height, slot: SLOT };
  }

  var lanes = {};
  function drawAllLanes() {
    (data.lanes || []).forEach(function (spec) { lanes[spec.id] = drawLanes(spec); });
  }
  drawAllLanes();
  window.addEventListener("resize", drawAllLanes);
  window.warmbenchLanes = lanes;
  window.warmbenchCharts = charts;
  document.documentElement.setAttribute("data-charts-ready", String(Object.keys(charts).length));
})();
