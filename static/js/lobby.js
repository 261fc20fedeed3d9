// The lobby's list of open tables, refreshed every few seconds from /tables.json.
(() => {
  "use strict";
  const list = document.getElementById("open-tables");
  if (!list) return;
  const SEATS = ["N", "E", "S", "W"];

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = String(text);
    return e;
  }

  function draw(tables) {
    if (!tables.length) {
      list.replaceChildren(el("li", "empty", "No open tables right now. Create one, or press Play now."));
      return;
    }
    list.replaceChildren(...tables.map((t) => {
      const li = el("li", "table-row");
      li.dataset.table = t.id;
      const title = el("div", "tr-title");
      const a = el("a", null, `Table ${t.id}`);
      a.href = t.url;
      title.append(a, el("span", "muted", ` hosted by ${t.host}`));
      const seats = el("div", "tr-seats");
      for (const s of t.seats) {
        const chip = el("span", "chip " + s.state, `${SEATS[s.position]} ${s.name || (s.state === "reserved" ? "held" : "open")}${s.bot ? " (bot)" : ""}`);
        if (s.bot) chip.title = `a bot: ${s.bot}`;
        seats.append(chip);
      }
      const rules = el("div", "tr-rules muted",
        `goal ${t.goal} / ${t.losing_goal} · ${t.nil ? "nil" : "no nil"}${t.blind_nil ? ", blind nil" : ""} · ${t.turn_seconds}s turns`);
      const join = el("a", "btn btn-small btn-gold", t.free ? "Join" : "Watch");
      join.href = t.url;
      li.append(title, seats, rules, join);
      return li;
    }));
  }

  async function poll() {
    try {
      const res = await fetch(list.dataset.url, { credentials: "same-origin" });
      if (res.ok) draw((await res.json()).tables);
    } catch { /* next time */ }
    setTimeout(poll, 3000);
  }
  poll();
})();
