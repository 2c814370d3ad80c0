// ctxgraph report: hover and focus details read from the embedded data. Everything the
// page says is in its tables already; this only shows a block's provenance and first
// lines in place, and moves between blocks with the arrow keys.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("ctxgraph-data").textContent);
  var detail = document.getElementById("detail");
  var byAgent = {};
  (data.agents || []).forEach(function (agent) { byAgent[agent.agent] = agent; });

  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  var current = null;
  function show(seg) {
    var agent = byAgent[seg.getAttribute("data-agent")];
    var block = agent && agent.blocks[Number(seg.getAttribute("data-block"))];
    if (!block || !detail) return;
    if (current) current.classList.remove("on");
    current = seg;
    seg.classList.add("on");
    detail.className = "detail k-" + block.kind;
    detail.style.backgroundImage = "none";
    detail.replaceChildren();
    detail.appendChild(el("h3", null, block.label));
    detail.appendChild(el("p", "meta", [
      agent.title, counted(block.tokens, "token"), counted(block.bytes, "byte"),
      block.status, block.placement, "rule " + block.rule
    ].join(" · ")));
    var chain = el("ol");
    block.provenance.forEach(function (step) { chain.appendChild(el("li", null, step)); });
    if (block.source !== block.label && block.source.charAt(0) !== "(") chain.insertBefore(el("li", null, "from " + block.source), chain.firstChild);
    detail.appendChild(chain);
    detail.appendChild(el("pre", null, block.first_lines || "(empty)"));
  }

  // `1 token`, `2 tokens`: the plural unless the count is one.
  function counted(n, word) {
    return n.toLocaleString("en") + " " + word + (n === 1 ? "" : "s");
  }

  var segments = Array.prototype.slice.call(document.querySelectorAll(".seg"));
  // One tab stop per bar (the arrow keys move within it and between bars); without the
  // script every block stays a tab stop of its own.
  segments.forEach(function (seg) {
    if (seg.parentNode.querySelector(".seg") !== seg) seg.tabIndex = -1;
  });
  function rove(seg) {
    seg.parentNode.querySelectorAll(".seg").forEach(function (s) { s.tabIndex = s === seg ? 0 : -1; });
  }
  segments.forEach(function (seg) {
    seg.addEventListener("mouseenter", function () { show(seg); });
    seg.addEventListener("focus", function () { rove(seg); show(seg); });
    seg.addEventListener("click", function (event) {
      // Open the agent's table at the block's row, keeping the bar in view.
      event.preventDefault();
      show(seg);
      var agent = seg.getAttribute("data-agent");
      var table = document.getElementById("t-" + agent);
      var row = document.getElementById("b-" + agent + "-" + seg.getAttribute("data-block"));
      if (table) table.open = true;
      document.querySelectorAll("table.blocks tr.on").forEach(function (r) { r.classList.remove("on"); });
      if (row) { row.classList.add("on"); row.scrollIntoView({ block: "nearest" }); }
    });
    seg.addEventListener("keydown", function (event) {
      var siblings = Array.prototype.slice.call(seg.parentNode.querySelectorAll(".seg"));
      var at = siblings.indexOf(seg);
      var next = null;
      if (event.key === "ArrowRight") next = siblings[at + 1];
      else if (event.key === "ArrowLeft") next = siblings[at - 1];
      else if (event.key === "Home") next = siblings[0];
      else if (event.key === "End") next = siblings[siblings.length - 1];
      else if (event.key === "ArrowDown" || event.key === "ArrowUp") {
        var rows = segments.map(function (s) { return s.parentNode; }).filter(function (b, i, all) { return all.indexOf(b) === i; });
        var bar = rows[rows.indexOf(seg.parentNode) + (event.key === "ArrowDown" ? 1 : -1)];
        if (bar) next = bar.querySelector(".seg");
      }
      if (next) { event.preventDefault(); next.focus(); }
    });
  });

  // Map cells: the whole reason on focus, for cells the layout clamps.
  document.querySelectorAll("td.fate").forEach(function (cell) {
    var why = cell.querySelector(".why");
    var fix = cell.querySelector(".fix");
    if (why) cell.title = why.textContent + (fix ? "\n" + fix.textContent : "");
  });
  if (segments.length && detail) show(segments[0]);
  document.documentElement.setAttribute("data-ready", "1");
})();
