// The replay page (templates/replays/replay.html): a finished round card by
// card, with its double-dummy analysis when stored (game/replays/).
(() => {
  "use strict";
  const config = JSON.parse(document.getElementById("replay-config").textContent);
  const replay = config.replay;
  let stored = config.stored;
  let step = 0; // cards played so far, 0..52
  let timer = null;
  const SEATS = ["N", "E", "S", "W"];
  const SEAT_NAME = { N: "North", E: "East", S: "South", W: "West" };
  const SUIT = { S: "\u2660", H: "\u2665", D: "\u2666", C: "\u2663" };
  const $ = (id) => document.getElementById(id);

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }

  function chip(code) {
    const c = el("span", "chip " + (code[1] === "H" || code[1] === "D" ? "red" : "black"));
    c.textContent = (code[0] === "T" ? "10" : code[0]) + SUIT[code[1]];
    c.dataset.card = code;
    return c;
  }

  function analysis() {
    return stored.ready && !stored.error ? stored.analysis : null;
  }

  function signed(n) {
    return (n > 0 ? "+" : "") + n;
  }

  // ----- the board -----------------------------------------------------------

  function renderHands() {
    const played = new Set(replay.cards.slice(0, step).map((c) => c.card));
    for (const seat of SEATS) {
      const box = document.querySelector(`.hand[data-seat="${seat}"] .cards`);
      box.replaceChildren(...replay.hands[seat].filter((c) => !played.has(c)).map(chip));
    }
  }

  function renderTrick() {
    const area = $("trick");
    area.replaceChildren();
    if (step === 0) {
      area.append(el("p", "muted", "The hands at the first lead."));
      return;
    }
    const t = Math.floor((step - 1) / 4);
    for (let i = 4 * t; i < Math.min(step, 4 * t + 4); i++) {
      const c = replay.cards[i];
      const slot = el("div", "played seat-" + c.seat);
      slot.append(el("span", "who", c.seat), chip(c.card));
      area.append(slot);
    }
    const last = replay.cards[4 * t + 3];
    const line = step % 4 === 0 ? `Trick ${t + 1}: ${SEAT_NAME[last.winner]} wins.` : `Trick ${t + 1}`;
    area.append(el("p", "trick-line", line));
  }

  function renderControls() {
    $("slider").value = String(step);
    $("step-label").textContent = step === 0 ? "before the first card" : `card ${step} of 52`;
    $("first").disabled = $("prev").disabled = step === 0;
    $("next").disabled = $("last").disabled = step === 52;
  }

  // ----- the analysis --------------------------------------------------------

  function renderNow() {
    const box = $("now-card");
    const alt = $("alternatives");
    if (step === 0) {
      box.textContent = "Before the first lead.";
      $("alt-btn").hidden = true;
      alt.hidden = true;
      return;
    }
    const c = replay.cards[step - 1];
    const a = analysis();
    box.replaceChildren(el("span", null, `${SEAT_NAME[c.seat]} plays `), chip(c.card));
    $("alt-btn").hidden = !a;
    if (!a) {
      box.append(el("span", "muted", stored.ready ? " (no analysis for this round)" : " (analysing)"));
      alt.hidden = true;
      return;
    }
    const x = a.cards[step - 1];
    const mark = el("span", `mark mark-${x.mark}`, x.mark === "none" ? "no loss" : x.mark);
    box.append(
      el("span", null, `: gives away ${x.points_lost} point${x.points_lost === 1 ? "" : "s"} and ${x.tricks_lost} trick${x.tricks_lost === 1 ? "" : "s"} `),
      mark,
      el("span", "muted", ` (value ${signed(a.values[step - 1])} before, ${signed(a.values[step])} after)`),
    );
    if ($("alt-btn").getAttribute("aria-expanded") === "true") renderAlternatives();
  }

  function renderAlternatives() {
    const box = $("alternatives");
    box.hidden = false;
    const alts = stored.alternatives;
    if (stored.alternatives_error) {
      box.replaceChildren(el("p", "muted", `The alternatives were ${stored.alternatives_error}.`));
      return;
    }
    if (!alts) {
      box.replaceChildren(el("p", "muted", "The alternatives are still being computed."));
      return;
    }
    const table = el("table", "sheet");
    const head = el("tr");
    for (const h of ["Card", "N/S value after", "Points given away", "Tricks given away"]) head.append(el("th", null, h));
    table.append(head);
    for (const o of alts[step - 1]) {
      const tr = el("tr", o.played ? "played-row" : null);
      const td = el("td");
      td.append(chip(o.card));
      if (o.played) td.append(el("span", "muted", " played"));
      tr.append(td, el("td", null, signed(o.value)), el("td", null, o.points_lost), el("td", null, o.tricks_lost));
      table.append(tr);
    }
    box.replaceChildren(table);
  }

  function renderCardList() {
    const list = $("card-list");
    const a = analysis();
    list.replaceChildren();
    replay.cards.forEach((c, i) => {
      const li = el("li", "card-row");
      li.dataset.index = String(i);
      li.append(el("span", "t", `${c.trick}.`), el("span", "who", c.seat), chip(c.card));
      if (a) {
        const x = a.cards[i];
        li.dataset.mark = x.mark;
        li.append(el("span", `mark mark-${x.mark}`, x.points_lost ? `-${x.points_lost}` : "0"));
        if (x.tricks_lost) li.append(el("span", "muted", ` (${x.tricks_lost} trick${x.tricks_lost === 1 ? "" : "s"})`));
      }
      li.tabIndex = -1;
      li.addEventListener("click", () => go(i + 1));
      list.append(li);
    });
  }

  function highlight() {
    for (const li of $("card-list").children) li.classList.toggle("current", Number(li.dataset.index) === step - 1);
    for (const dot of document.querySelectorAll("#graph circle")) dot.classList.toggle("current", Number(dot.dataset.index) === step);
  }

  const SVG = $("graph-svg").namespaceURI; // the page's inline <svg>: its elements' namespace

  function svg(tag, attrs) {
    const e = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
    return e;
  }

  function renderGraph() {
    const g = $("graph-svg");
    const a = analysis();
    g.replaceChildren();
    $("graph-note").textContent = a ? "" : stored.ready ? "No analysis." : "Analysing…";
    if (!a) return;
    const W = 520, H = 160, pad = 24;
    const lo = Math.min(0, ...a.values), hi = Math.max(0, ...a.values);
    const x = (i) => pad + (i * (W - 2 * pad)) / 52;
    const y = (v) => H - pad - ((v - lo) * (H - 2 * pad)) / (hi - lo || 1);
    g.append(svg("line", { x1: pad, x2: W - pad, y1: y(0), y2: y(0), class: "axis" }));
    for (let t = 0; t <= 13; t++) g.append(svg("line", { x1: x(4 * t), x2: x(4 * t), y1: pad / 2, y2: H - pad, class: "trick-tick" }));
    g.append(svg("polyline", { points: a.values.map((v, i) => `${x(i)},${y(v)}`).join(" "), class: "value-line" }));
    a.values.forEach((v, i) => {
      const mark = i > 0 ? a.cards[i - 1].mark : "none";
      const dot = svg("circle", { cx: x(i), cy: y(v), r: mark === "none" ? 2.5 : 4.5, class: `dot mark-${mark}` });
      dot.dataset.index = String(i);
      dot.dataset.value = String(v);
      const title = svg("title", {});
      title.textContent = i === 0 ? `before the first card: ${signed(v)}` : `after card ${i} (${replay.cards[i - 1].seat} ${replay.cards[i - 1].card}): ${signed(v)}`;
      dot.append(title);
      dot.addEventListener("click", () => go(i));
      g.append(dot);
    });
    const label = (v) => svg("text", { x: 2, y: y(v) + 4, class: "graph-label" });
    for (const v of new Set([lo, 0, hi])) {
      const t = label(v);
      t.textContent = signed(v);
      g.append(t);
    }
  }

  function renderBids() {
    const body = $("bids").tBodies[0];
    const a = analysis();
    body.replaceChildren();
    replay.bids.forEach((b, i) => {
      const tr = el("tr");
      const bid = (n, blind) => (n === 0 ? (blind ? "blind nil" : "nil") : String(n));
      tr.append(el("td", null, SEAT_NAME[b.seat]), el("td", null, bid(b.bid, b.blind)));
      if (a) {
        const x = a.bids[i];
        tr.append(el("td", x.bis_bid === b.bid && x.bis_blind === b.blind ? null : "differs", bid(x.bis_bid, x.bis_blind)),
          el("td", null, `${x.takes} tricks; nil ${Math.round(100 * x.nil_probability)}%`));
      } else {
        tr.append(el("td", "muted", "…"), el("td", "muted", "…"));
      }
      body.append(tr);
    });
    $("makeable").textContent = a ? `Double-dummy makeable tricks from the first lead: North/South ${a.makeable[0]}, East/West ${a.makeable[1]}.` : "";
  }

  function renderResult() {
    const box = $("result");
    const rows = replay.result.map((p, i) => `${i === 0 ? "North/South" : "East/West"}: ${p.contract} bid, ${p.tricks} taken, ${signed(p.points)} points (${p.score_before} → ${p.score_after}), ${p.bags_after} bags`);
    box.replaceChildren(...rows.map((r) => el("p", null, r)));
  }

  function renderStatus() {
    const s = $("status");
    if (!stored.ready) s.textContent = "Analysing… the marks and the graph appear here when the analysis is ready.";
    else if (stored.error) s.textContent = `This round cannot be analysed: ${stored.error}`;
    else s.textContent = "";
  }

  // ----- stepping ------------------------------------------------------------

  function go(n) {
    step = Math.max(0, Math.min(52, n));
    renderHands();
    renderTrick();
    renderControls();
    renderNow();
    highlight();
    if (step === 52) stop();
  }

  function stop() {
    if (timer !== null) clearInterval(timer);
    timer = null;
    $("play").setAttribute("aria-pressed", "false");
    $("play").textContent = "Play";
  }

  function renderAnalysis() {
    renderStatus();
    renderCardList();
    renderGraph();
    renderBids();
    go(step);
  }

  $("first").addEventListener("click", () => go(0));
  $("prev").addEventListener("click", () => go(step - 1));
  $("next").addEventListener("click", () => go(step + 1));
  $("last").addEventListener("click", () => go(52));
  $("slider").addEventListener("input", () => go(Number($("slider").value)));
  $("alt-btn").addEventListener("click", () => {
    const open = $("alt-btn").getAttribute("aria-expanded") !== "true";
    $("alt-btn").setAttribute("aria-expanded", String(open));
    if (open) renderAlternatives();
    else $("alternatives").hidden = true;
  });
  // The play-out steps a card every 0.8 s; none under reduced motion.
  const reduced = window.matchMedia("(prefers-reduced-motion: reduce)").matches;
  $("play").hidden = reduced;
  $("play").addEventListener("click", () => {
    if (timer !== null) return stop();
    if (step === 52) go(0);
    $("play").setAttribute("aria-pressed", "true");
    $("play").textContent = "Pause";
    timer = setInterval(() => go(step + 1), 800);
  });
  document.addEventListener("keydown", (e) => {
    if (e.target instanceof HTMLInputElement && e.target.type !== "range") return;
    const moves = { ArrowRight: step + 1, ArrowLeft: step - 1, Home: 0, End: 52,
      PageDown: 4 * Math.floor(step / 4) + 4, PageUp: 4 * Math.ceil(step / 4) - 4 };
    if (!(e.key in moves)) return;
    e.preventDefault();
    stop();
    go(moves[e.key]);
  });

  function poll() {
    fetch(config.analysisUrl, { headers: { Accept: "application/json" } })
      .then((r) => (r.ok ? r.json() : null))
      .then((data) => {
        if (data && data.ready) {
          stored = data;
          renderAnalysis();
          if (!data.error && !data.alternatives && !data.alternatives_error) setTimeout(poll, 5000); // the second pass
        } else {
          setTimeout(poll, 3000);
        }
      })
      .catch(() => setTimeout(poll, 5000));
  }

  renderResult();
  renderAnalysis();
  if (!stored.ready || (!stored.error && !stored.alternatives && !stored.alternatives_error)) setTimeout(poll, 3000);
})();
