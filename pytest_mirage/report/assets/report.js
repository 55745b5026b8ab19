// pytest-mirage HTML report: filters (suite, language, model), metric choice, and the layout of
// the plots after a filter hides rows, columns or bars. No dependencies, no network; text from the
// report is only ever read from attributes and written with textContent (never parsed as HTML).
(function () {
  "use strict";
  var DIMS = ["suite", "lang", "model"];
  var state = {};

  function chosen(dim) {
    var boxes = document.querySelectorAll('#filters input[data-dim="' + dim + '"]');
    if (!boxes.length) return null; // one value only: no filter
    var set = new Set();
    boxes.forEach(function (box) { if (box.checked) set.add(box.value); });
    return set;
  }

  function passes(el) {
    for (var i = 0; i < DIMS.length; i++) {
      var dim = DIMS[i], value = el.getAttribute("data-" + dim), set = state[dim];
      // "all" is the suite-level value (all languages together): a language filter keeps it
      if (value === null || set === null || (dim === "lang" && value === "all")) continue;
      if (!set.has(value)) return false;
    }
    return true;
  }

  function num(el, name) { return parseFloat(el.getAttribute("data-" + name)); }

  // visible elements' index attribute -> position among the visible ones (in index order)
  function slots(els, key) {
    var keys = [];
    els.forEach(function (el) {
      if (el.classList.contains("off")) return;
      var k = Number(el.getAttribute(key));
      if (keys.indexOf(k) < 0) keys.push(k);
    });
    keys.sort(function (a, b) { return a - b; });
    var pos = {};
    keys.forEach(function (k, i) { pos[k] = i; });
    return { pos: pos, n: keys.length };
  }

  function resize(svg, w, h) {
    svg.setAttribute("width", w);
    svg.setAttribute("height", h);
    svg.setAttribute("viewBox", "0 0 " + w + " " + h);
  }

  function empty(svg, isEmpty) {
    var fig = svg.closest("figure");
    if (fig) fig.classList.toggle("empty", isEmpty);
  }

  function layoutGrid(svg) {
    var x0 = num(svg, "x0"), y0 = num(svg, "y0"), cw = num(svg, "cw"), ch = num(svg, "ch");
    var cells = svg.querySelectorAll(".cell"), rowEls = svg.querySelectorAll(".row");
    var colEls = svg.querySelectorAll(".col");
    var rows = slots(rowEls.length ? rowEls : cells, "data-ri");
    var cols = colEls.length ? slots(colEls, "data-ci") : { pos: { 0: 0 }, n: 1 };
    cells.forEach(function (c) {
      if (c.classList.contains("off")) return;
      var r = rows.pos[c.getAttribute("data-ri")], k = cols.pos[c.getAttribute("data-ci")];
      if (r === undefined || k === undefined) { c.classList.add("off"); return; }
      c.setAttribute("transform", "translate(" + (x0 + k * cw) + "," + (y0 + r * ch) + ")");
    });
    rowEls.forEach(function (el) {
      var r = rows.pos[el.getAttribute("data-ri")];
      if (r !== undefined) el.setAttribute("y", y0 + r * ch + 15);
    });
    colEls.forEach(function (el) {
      var k = cols.pos[el.getAttribute("data-ci")];
      if (k !== undefined) el.setAttribute("x", x0 + k * cw + cw / 2);
    });
    var h = y0 + rows.n * ch + num(svg, "padh");
    resize(svg, x0 + cols.n * cw + num(svg, "padw"), h);
    svg.querySelectorAll(".foot").forEach(function (el) { el.setAttribute("y", h - 6); });
    empty(svg, rows.n === 0 || cols.n === 0);
  }

  function layoutGroups(svg) {
    var x0 = num(svg, "x0"), bw = num(svg, "bw"), gap = num(svg, "gap");
    var models = slots(svg.querySelectorAll(".mkey"), "data-mi");
    var groups = slots(svg.querySelectorAll(".glabel"), "data-gi");
    var gw = models.n * bw + gap, shown = 0;
    svg.querySelectorAll(".bar").forEach(function (b) {
      if (b.classList.contains("off")) return;
      var m = models.pos[b.getAttribute("data-mi")], g = groups.pos[b.getAttribute("data-gi")];
      if (m === undefined || g === undefined) { b.classList.add("off"); return; }
      b.setAttribute("transform", "translate(" + (x0 + g * gw + m * bw) + ",0)");
      shown += 1;
    });
    svg.querySelectorAll(".glabel").forEach(function (el) {
      var g = groups.pos[el.getAttribute("data-gi")];
      if (g !== undefined) el.setAttribute("x", x0 + g * gw + models.n * bw / 2);
    });
    resize(svg, x0 + groups.n * gw + 4, num(svg, "h0"));
    empty(svg, shown === 0);
  }

  function layoutHist(svg) {
    var counts = JSON.parse(svg.getAttribute("data-counts"));
    var top = num(svg, "top"), h = num(svg, "h");
    var segs = svg.querySelectorAll(".hseg"), totals = {}, max = 0;
    segs.forEach(function (r) {
      var model = r.getAttribute("data-model"), bin = Number(r.getAttribute("data-bin")), c = 0;
      var per = Object.prototype.hasOwnProperty.call(counts, model) ? counts[model] : {};
      if (state.model === null || state.model.has(model)) {
        Object.keys(per).forEach(function (lang) {
          if (state.lang === null || state.lang.has(lang)) c += per[lang][bin];
        });
      }
      r.setAttribute("data-c", c);
      totals[bin] = (totals[bin] || 0) + c;
      if (totals[bin] > max) max = totals[bin];
    });
    var base = {};
    segs.forEach(function (r) {
      var bin = r.getAttribute("data-bin"), c = Number(r.getAttribute("data-c"));
      var hh = max ? h * c / max : 0;
      var y = (bin in base ? base[bin] : top + h) - hh;
      base[bin] = y;
      r.setAttribute("y", y);
      r.setAttribute("height", hh);
      var title = r.querySelector("title");
      if (title) title.textContent = r.getAttribute("data-model") + ": " + c;
    });
    var ymax = svg.querySelector(".ymax");
    if (ymax) ymax.textContent = String(max);
    empty(svg, max === 0);
  }

  function apply() {
    DIMS.forEach(function (dim) { state[dim] = chosen(dim); });
    document.querySelectorAll(".f").forEach(function (el) { el.classList.toggle("off", !passes(el)); });
    document.querySelectorAll('svg[data-layout="grid"]').forEach(layoutGrid);
    document.querySelectorAll('svg[data-layout="groups"]').forEach(layoutGroups);
    document.querySelectorAll('svg[data-layout="hist"]').forEach(layoutHist);
    document.querySelectorAll("[data-count]").forEach(function (out) {
      var n = 0;
      document.querySelectorAll(out.getAttribute("data-count")).forEach(function (el) {
        if (!el.closest(".off")) n += 1;
      });
      out.textContent = String(n);
    });
  }

  function pickMetric(sel) {
    var group = sel.getAttribute("data-group");
    document.querySelectorAll("figure[data-group]").forEach(function (fig) {
      if (fig.getAttribute("data-group") === group) {
        fig.classList.toggle("unchosen", fig.getAttribute("data-metric") !== sel.value);
      }
    });
  }

  document.querySelectorAll("svg[data-layout=groups]").forEach(function (svg) {
    svg.setAttribute("data-h0", svg.getAttribute("height"));
  });
  document.querySelectorAll("#filters input[data-dim]").forEach(function (box) {
    box.addEventListener("change", apply);
  });
  document.querySelectorAll("#filters button[data-set]").forEach(function (button) {
    button.addEventListener("click", function () {
      var on = button.getAttribute("data-set") === "all";
      document.querySelectorAll('#filters input[data-dim="' + button.getAttribute("data-dim") + '"]')
        .forEach(function (box) { box.checked = on; });
      apply();
    });
  });
  document.querySelectorAll("select.metric").forEach(function (sel) {
    sel.addEventListener("change", function () { pickMetric(sel); });
    pickMetric(sel);
  });
  apply();
  document.documentElement.setAttribute("data-ready", "1");
})();
