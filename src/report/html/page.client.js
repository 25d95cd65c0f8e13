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
  window.warmbenchCharts = charts;
  document.documentElement.setAttribute("data-charts-ready", String(Object.keys(charts).length));
})();
