// The table page: one websocket (ws/table/<id>/), the whole view in every
// `state` frame, drawn from scratch. Text from other people (names, chat)
// only ever goes in with textContent.
(() => {
  "use strict";
  const cfg = JSON.parse(document.getElementById("table-config").textContent);
  const $ = (id) => document.getElementById(id);
  const SEATS = ["North", "East", "South", "West"];
  const SUIT_SYMBOL = { S: "\u2660", H: "\u2665", D: "\u2666", C: "\u2663" };
  const SUIT_NAME = { S: "spades", H: "hearts", D: "diamonds", C: "clubs" };
  const SUIT_ORDER = { S: 0, H: 1, C: 2, D: 3 }; // alternate the colours in the hand
  const RANKS = "23456789TJQKA";
  const RANK_NAME = { T: "10", J: "jack", Q: "queen", K: "king", A: "ace" };

  let ws = null;
  let lastVersion = -1;
  let view = null;
  let retry = 0;
  let pending = false;
  let lastRound = null;
  let lastResync = 0;
  let seatingTimer = null;
  let rematchTimer = null;
  let matchShown = false;
  const selected = new Set();
  let drawnTrick = null; // {key, count}: the trick on the felt, to see which cards are new
  let sweptKey = null; // the finished trick already swept to its winner
  let sweepTimer = null;
  // A finished trick shows this long, then is gathered (a bot leads the next
  // one later still: game/master.py TRICK_PAUSE).
  const SWEEP_AFTER_MS = 700;
  const TITLE = document.title;
  const REACTION_EMOJI = {
    thumbs_up: "\u{1F44D}", well_played: "\u{1F44F}", laugh: "\u{1F604}",
    wow: "\u{1F62E}", oops: "\u{1F62C}", good_game: "\u{1F91D}",
  };
  const REACTION_NAME = {
    thumbs_up: "thumbs up", well_played: "well played", laugh: "laugh",
    wow: "wow", oops: "oops", good_game: "good game",
  };

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }

  // ----- cards -------------------------------------------------------------

  function cardEl(code, opts = {}) {
    const rank = code[0];
    const suit = code[1];
    const e = el(opts.button ? "button" : "div", "card " + (suit === "H" || suit === "D" ? "red" : "black"));
    if (opts.button) e.type = "button";
    e.dataset.card = code;
    const r = rank === "T" ? "10" : rank;
    // Read once, as "ace of hearts": the drawn corners and pip are hidden from screen readers.
    e.setAttribute("aria-label", `${RANK_NAME[rank] || r} of ${SUIT_NAME[suit]}`);
    if (!opts.button) e.setAttribute("role", "img");
    const tl = el("span", "corner tl");
    tl.append(el("span", "r", r), el("span", "s", SUIT_SYMBOL[suit]));
    const br = el("span", "corner br");
    br.append(el("span", "r", r), el("span", "s", SUIT_SYMBOL[suit]));
    const pip = el("span", "pip", "JQK".includes(rank) ? rank + SUIT_SYMBOL[suit] : SUIT_SYMBOL[suit]);
    if ("JQK".includes(rank)) pip.classList.add("face");
    for (const part of [tl, pip, br]) part.setAttribute("aria-hidden", "true");
    e.append(tl, pip, br);
    return e;
  }

  function sortHand(cards) {
    return [...cards].sort(
      (a, b) => SUIT_ORDER[a[1]] - SUIT_ORDER[b[1]] || RANKS.indexOf(b[0]) - RANKS.indexOf(a[0])
    );
  }

  // ----- geometry: me at the bottom, partner at the top ----------------------

  const base = () => (view && view.seat !== null && view.seat !== undefined ? view.seat : 2);
  const relOf = (pos) => (pos - base() + 4) % 4; // 0 bottom, 1 left, 2 top, 3 right
  const seatName = (pos) => {
    const s = view && view.table && view.table.seats[pos];
    return s ? s.name : SEATS[pos];
  };
  const who = (pos) => (view && pos === view.seat ? "You" : seatName(pos));

  // ----- the socket ----------------------------------------------------------

  function connect() {
    const proto = location.protocol === "https:" ? "wss:" : "ws:";
    const query = cfg.silent ? "?silent=1" : "";  // staff watching unseen
    ws = new WebSocket(`${proto}//${location.host}/ws/table/${encodeURIComponent(cfg.id)}/${query}`);
    ws.onopen = () => {
      retry = 0;
      if (lastVersion >= 0) send({ type: "resync", version: lastVersion });
    };
    ws.onmessage = (ev) => {
      let msg;
      try { msg = JSON.parse(ev.data); } catch { return; }
      if (msg.type === "state") onState(msg);
      else if (msg.type === "error") onError(msg);
      else if (msg.type === "chat") onChat(msg);
      else if (msg.type === "chat_history") onChatHistory(msg);
      else if (msg.type === "reaction") onReaction(msg);
      else if (msg.type === "watchers") onWatchers(msg);
    };
    ws.onclose = (ev) => {
      // Refusals that a retry would only repeat (close codes: game/sockets/consumers.py).
      const final = {
        4404: "This table does not exist.",
        4403: "This table is private: ask one of its players for the invite link.",
        4429: "Too many tables are open in this browser or on this network: close some tabs, then reload.",
      }[ev.code];
      if (final) { setStatus(final); document.body.classList.add("offline"); return; }
      const wait = Math.min(10000, 400 * 2 ** retry) + Math.random() * 300;
      retry += 1;
      setStatus("Connection lost: reconnecting…");
      document.body.classList.add("offline");
      setTimeout(connect, wait);
    };
  }

  function send(frame) {
    if (ws && ws.readyState === WebSocket.OPEN) {
      ws.send(JSON.stringify(frame));
      return true;
    }
    return false;
  }

  // When this seat's decision at a version was first drawn (its buttons or
  // legal cards on screen): the think time the server stores with the act is
  // measured from it (and bounded by its own clock). A state may be drawn
  // again at the same version (seats changed, a resync): the first counts.
  let offered = { version: -1, at: 0 };
  function decisionDrawn(version) {
    if (version === offered.version) return;
    requestAnimationFrame(() => { if (version !== offered.version) offered = { version, at: performance.now() }; });
  }

  function act(action) {
    if (pending || !view) return;
    const frame = { type: "act", action, version: view.version };
    if (offered.version === view.version) frame.think_ms = Math.max(0, Math.round(performance.now() - offered.at));
    if (send(frame)) {
      pending = true;
      document.body.classList.add("pending");
    }
  }

  function onState(msg) {
    document.body.classList.remove("offline");
    if (msg.version < lastVersion) return; // an older frame overtaken by a newer one
    if (lastVersion >= 0 && msg.version > lastVersion + 1 && Date.now() - lastResync > 2000) {
      // A gap: the frame is the whole view, so draw it, and ask for a fresh one to be sure.
      lastResync = Date.now();
      send({ type: "resync", version: lastVersion });
    }
    lastVersion = msg.version;
    const now = performance.now();
    calm = now - lastFrameAt > 120;
    lastFrameAt = now;
    const before = view;
    view = msg.view;
    pending = false;
    document.body.classList.remove("pending");
    render();
    cue(before, view);
  }

  let errorTimer = null;
  function onError(msg) {
    pending = false;
    document.body.classList.remove("pending");
    showError(msg.message);
  }

  function showError(text) {
    const e = $("error");
    e.textContent = text;
    e.hidden = false;
    clearTimeout(errorTimer);
    errorTimer = setTimeout(() => { e.hidden = true; }, 5000);
  }

  function chatLine(msg) {
    const li = el("li");
    const seated = msg.seat !== null && msg.seat !== undefined;
    const name = el("strong", null, (msg.name || "someone") + (seated ? ` (${SEATS[msg.seat]})` : " (watching)"));
    li.append(name, document.createTextNode(": " + String(msg.text).slice(0, 200)));
    if (msg.at) li.title = new Date(msg.at).toLocaleString();
    return li;
  }

  function onChat(msg) {
    const log = $("chat-log");  // none where the table's talk is off (a study's)
    if (!log) return;
    log.append(chatLine(msg));
    while (log.children.length > 100) log.firstChild.remove();
    log.scrollTop = log.scrollHeight;
  }

  // On (re)connecting: the table's last lines, which replace what is shown.
  function onChatHistory(msg) {
    const log = $("chat-log");
    if (!log) return;
    log.replaceChildren(...(msg.lines || []).map(chatLine));
    log.scrollTop = log.scrollHeight;
  }

  function onWatchers(msg) {
    const names = (msg.names || []).map((n) => n || "a guest");
    const box = $("watchers");
    if (!box) return;
    box.hidden = names.length === 0;
    box.textContent = names.length ? `${names.length} watching: ${names.join(", ")}` : "";
  }

  // A quick reaction: a bubble by the seat for a player, a chat line for a spectator.
  function onReaction(msg) {
    const emoji = REACTION_EMOJI[msg.emote];
    if (!emoji) return;
    const seated = msg.seat !== null && msg.seat !== undefined && view;
    if (!seated) {
      onChat({ seat: null, name: msg.name, text: emoji });
      return;
    }
    const box = document.querySelector(`.seat-box[data-rel="${relOf(msg.seat)}"]`);
    if (!box) return;
    box.querySelectorAll(".reaction-bubble").forEach((b) => b.remove());
    const bubble = el("span", "reaction-bubble", emoji);
    bubble.setAttribute("role", "img");
    bubble.setAttribute("aria-label", `${who(msg.seat)}: ${REACTION_NAME[msg.emote]}`);
    box.append(bubble);
    setTimeout(() => bubble.remove(), 3000);
  }

  // ----- drawing ---------------------------------------------------------------

  function setStatus(text, mine) {
    $("status").textContent = text;
    $("status-bar").classList.toggle("mine", !!mine);
  }

  function render() {
    const t = view.table;
    $("app").dataset.status = t.status;
    if (t.status === "abandoned") {
      $("seating").hidden = true;
      $("hand").replaceChildren();
      $("actions").replaceChildren();
      if (t.version > 0) { renderSeats(); renderTrick(); renderScores(); renderSheet(); }
      setStatus("This table was closed: nobody was here for a long while. Start a new one from the lobby.");
      return;
    }
    if (t.status === "open") {
      $("seating").hidden = false;
      renderSeatsOpen();
      refreshSeating();
      $("hand").replaceChildren();
      $("actions").replaceChildren();
      const full = t.seats.filter(Boolean).length === 4;
      setStatus(
        full ? (cfg.isHost ? "All four seats are taken: start the match when you are ready." : "All four seats are taken: waiting for the host to start.")
          : cfg.isHost ? "Waiting for players: invite friends or add bots." : "Waiting for players…"
      );
      return;
    }
    $("seating").hidden = true;
    if (view.seat !== cfg.seat && cfg.seat === null && view.seat !== null) cfg.seat = view.seat;
    renderSeats();
    renderAway();
    $("leave-btn").hidden = !(view.seat !== null && view.seat !== undefined && t.status === "playing");
    renderTrick();
    renderHand();
    renderActions();
    renderScores();
    renderSheet();
    renderRoundSummary();
    renderMatchOver();
    renderLastTrick();
  }

  function cardText(code) {
    const rank = code[0];
    return `${RANK_NAME[rank] || rank} of ${SUIT_NAME[code[1]]}`;
  }

  function actionText(a) {
    if (a.type === "bid") return a.tricks === 0 ? "bid nil" : `bid ${a.tricks}`;
    if (a.type === "play") return `played the ${cardText(a.card)}`;
    if (a.type === "pass_cards") return `passed ${a.cards.map(cardText).join(" and ")}`;
    return "looked at your cards";
  }

  // A player whose timer ran out is away: the stand-in moves for them at once
  // until they act or press "I'm back" (game/master.py).
  function renderAway() {
    const me = view.seat !== null && view.seat !== undefined ? view.table.seats[view.seat] : null;
    const away = !!me && me.kind === "human" && me.away;
    $("away-note").hidden = !away;
    if (away) $("round-summary").hidden = true;
    if (away) {
      // The bid it made (what you will be held to) and its last few cards.
      const done = me.played_for || [];
      const bid = done.filter((a) => a.type === "bid").pop();
      const shown = [bid, ...done.filter((a) => a.type === "play").slice(-4)].filter(Boolean);
      $("away-played").textContent = shown.length ? `Played for you: ${shown.map(actionText).join(", ")}.` : "";
    }
  }

  function bidText(pos) {
    const b = view.bids[pos];
    if (b === null || b === undefined) return "";
    if (b === 0) return view.blind[pos] ? "Blind nil" : "Nil";
    return `Bid ${b}`;
  }

  function renderSeats() {
    const t = view.table;
    const deadline = t.turn_deadline ? Date.parse(t.turn_deadline) : null;
    for (const box of document.querySelectorAll(".seat-box")) {
      const rel = Number(box.dataset.rel);
      const pos = (base() + rel) % 4;
      const seat = t.seats[pos];
      box.dataset.pos = pos;
      box.querySelector(".name").textContent = (pos === view.seat ? "You" : seat ? seat.name : "Empty") + ` · ${SEATS[pos]}`;
      const kind = box.querySelector(".bot-kind");
      kind.hidden = !(seat && seat.kind === "bot");
      // A study's participants read plain words, not a registry name.
      kind.textContent = kind.hidden ? "" : cfg.inStudy ? "computer player" : `bot · ${seat.bot_name}`;
      box.classList.toggle("bot", !!seat && seat.kind === "bot");
      box.classList.toggle("away", !!seat && !!seat.away);
      box.title = seat && seat.away ? "Away: a bot is playing for this seat" : "";
      box.querySelector(".dealer-chip").hidden = view.dealer !== pos;
      const bid = box.querySelector(".bid");
      bid.textContent = bidText(pos) || (view.phase === "bidding" && view.to_act === pos ? "…" : "");
      bid.classList.toggle("nil", view.bids[pos] === 0);
      box.querySelector(".tricks").textContent = view.phase === "bidding" ? "" : `Tricks ${view.tricks_won[pos]}`;
      const turn = view.match_winner === null && view.to_act === pos;
      box.classList.toggle("turn", turn);
      box.classList.toggle("partner", view.seat !== null && pos === (view.seat + 2) % 4);
      const timer = box.querySelector(".seat-timer");
      timer.hidden = !(turn && deadline && seat && seat.kind === "human" && !seat.away);
      timer.dataset.deadline = deadline || "";
      const backs = box.querySelector(".backs");
      const n = rel === 0 && view.seat !== null ? 0 : view.hand_counts[pos];
      if (backs.childElementCount !== n) {
        backs.replaceChildren(...Array.from({ length: n }, () => el("span", "back")));
      }
    }
    tickTimers();
  }

  function tickTimers() {
    for (const timer of document.querySelectorAll(".seat-timer")) {
      if (timer.hidden || !timer.dataset.deadline) continue;
      const left = Math.max(0, Math.ceil((Number(timer.dataset.deadline) - Date.now()) / 1000));
      timer.textContent = `${left}s left`;
      timer.classList.toggle("low", left <= 5);
    }
  }
  setInterval(tickTimers, 250);
  // Leaving is explicit: a bot takes the seat for the rest of the match.
  $("leave-btn").addEventListener("click", async () => {
    const question = cfg.inStudy
      ? "Stop taking part in the study? A computer player takes your seat until the match ends, you will not come back to this table, and the study counts you as having stopped (see the study's information about payment)."
      : "Leave this match? A bot will play your seat until it ends.";
    if (!confirm(question)) return;
    try {
      await post(cfg.seatUrl, { op: "leave" });
      location.href = cfg.afterLeaving || "/";
    } catch (e) {
      showError(e.message);
    }
  });
  $("back-btn").addEventListener("click", () => {
    if (send({ type: "back" })) $("away-note").hidden = true;
  });
  // The page is still open: a seated player's ping keeps the table from being
  // closed as abandoned (game/abandoned.py).
  setInterval(() => send({ type: "ping" }), 60000);

  const reduced = matchMedia("(prefers-reduced-motion: reduce)");
  let lastFrameAt = 0;
  let calm = true; // frames a human can follow: not a burst (a resync, bots at full speed)
  const moving = () => calm && !reduced.matches;

  function centre(e) {
    const r = e.getBoundingClientRect();
    return [r.left + r.width / 2, r.top + r.height / 2];
  }

  // A card just played travels from the hand (yours) or the seat to its place.
  function arrive(card, pos, code) {
    const fromHand = pos === view.seat && document.querySelector(`#hand .card[data-card="${code}"]`);
    const from = fromHand || document.querySelector(`.seat-box[data-rel="${relOf(pos)}"]`);
    if (!from) return;
    const [fx, fy] = centre(from);
    const [tx, ty] = centre(card);
    card.animate(
      [{ transform: `translate(${fx - tx}px, ${fy - ty}px) scale(0.85)`, opacity: 0.5 }, { transform: "none", opacity: 1 }],
      { duration: 280, easing: "cubic-bezier(.2,.8,.3,1)" }
    );
  }

  // A finished trick is gathered to its winner's seat, then the felt is clear.
  function sweep(key, winner) {
    const to = document.querySelector(`.seat-box[data-rel="${relOf(winner)}"]`);
    const cards = [...document.querySelectorAll("#trick .slot .card")];
    if (!to || !cards.length) return;
    const [tx, ty] = centre(to);
    sweptKey = key;
    for (const card of cards) {
      const [cx, cy] = centre(card);
      const a = card.animate(
        [{ transform: "none", opacity: 1 }, { transform: `translate(${tx - cx}px, ${ty - cy}px) scale(0.5)`, opacity: 0 }],
        { duration: 380, easing: "ease-in", fill: "forwards" }
      );
      a.onfinish = () => card.closest(".slot").classList.add("swept");
    }
  }

  function renderTrick() {
    const slots = document.querySelectorAll("#trick .slot");
    slots.forEach((s) => { s.replaceChildren(); s.classList.remove("swept"); });
    const note = $("trick-note");
    note.textContent = "";
    let cards = view.trick;
    let leader = view.leader;
    let done = null;
    let index = view.tricks.length; // the trick's number in the round, from 0
    if (cards.length === 0 && view.tricks.length > 0) {
      done = view.tricks[view.tricks.length - 1];
      cards = done.cards;
      leader = done.leader;
      index -= 1;
    }
    const key = `${view.round_number}:${index}`;
    const fresh = drawnTrick && drawnTrick.key === key ? drawnTrick.count : drawnTrick ? 0 : cards.length;
    drawnTrick = { key, count: cards.length };
    const swept = done && sweptKey === key;
    cards.forEach((code, i) => {
      const pos = (leader + i) % 4;
      const slot = slots[relOf(pos)];
      const c = cardEl(code);
      c.title = `${who(pos)} played this`;
      slot.append(c, el("span", "played-by", who(pos)));
      if (swept) slot.classList.add("swept");
      else if (i >= fresh && moving()) arrive(c, pos, code);
    });
    const trickBox = $("trick");
    trickBox.classList.toggle("done", !!done);
    if (done) {
      note.textContent = `${who(done.winner)} ${done.winner === view.seat ? "win" : "wins"} the trick · `;
      slots[relOf(done.winner)].classList.add("winner");
    }
    slots.forEach((s, i) => { if (!done || i !== relOf(done.winner)) s.classList.remove("winner"); });
    clearTimeout(sweepTimer);
    if (done && !swept && moving()) sweepTimer = setTimeout(() => sweep(key, done.winner), SWEEP_AFTER_MS);
  }

  function legalSet(type) {
    return view.legal_actions.filter((a) => a.type === type);
  }

  function renderHand() {
    const hand = $("hand");
    // Keyboard play: focus stays in the hand when it is redrawn after a move.
    const focused = [...hand.children].indexOf(document.activeElement);
    hand.replaceChildren();
    if (view.seat === null || view.seat === undefined) {
      hand.append(el("p", "spectator-note", "You are watching this table. Hidden cards stay hidden."));
      return;
    }
    if (view.hand === null) {
      for (let i = 0; i < view.hand_counts[view.seat]; i++) hand.append(el("span", "card back-card"));
      return;
    }
    const plays = new Set(legalSet("play").map((a) => a.card));
    const passing = view.phase === "passing" && view.to_act === view.seat;
    for (const code of sortHand(view.hand)) {
      const c = cardEl(code, { button: true });
      if (view.phase === "playing") {
        c.classList.add(plays.has(code) ? "legal" : "illegal");
        if (!plays.has(code)) c.setAttribute("aria-disabled", "true");
        if (!plays.has(code) && view.to_act === view.seat) c.title = "Not playable now: click to see why";
        c.addEventListener("click", () => act({ type: "play", card: code }));
      } else if (passing) {
        c.classList.toggle("selected", selected.has(code));
        c.addEventListener("click", () => {
          if (selected.has(code)) selected.delete(code); else selected.add(code);
          renderHand();
          renderActions();
        });
      } else {
        c.tabIndex = -1;
      }
      hand.append(c);
    }
    if (focused >= 0 && hand.children.length) {
      const next = hand.querySelector(".card.legal") || hand.children[Math.min(focused, hand.children.length - 1)];
      next.focus();
    }
  }

  function button(label, onClick, cls = "btn") {
    const b = el("button", cls, label);
    b.type = "button";
    b.addEventListener("click", onClick);
    return b;
  }

  function renderActions() {
    const box = $("actions");
    box.replaceChildren();
    const me = view.seat;
    const over = view.match_winner !== null;
    if (over) { setStatus("The match is over."); return; }
    const toAct = view.to_act;
    const mine = me !== null && toAct === me;
    if (mine) decisionDrawn(view.version);
    const phaseWord = view.phase === "bidding" ? "bid" : view.phase === "passing" ? "pass cards" : "play";
    setStatus(mine ? `Your turn to ${phaseWord}` : `${seatName(toAct)} to ${phaseWord}…`, mine);
    if (me === null) return;
    if (view.phase === "bidding") {
      const see = legalSet("see_cards")[0];
      const bids = legalSet("bid");
      if (!mine && !see) return;
      const panel = el("div", "bid-panel");
      panel.setAttribute("aria-label", "Bidding");
      if (mine) {
        panel.append(el("span", "panel-title", view.hand === null ? "Bid blind, or look first" : "Your bid"));
        const grid = el("div", "bid-grid");
        for (const a of bids) {
          if (a.blind) continue;
          if (view.hand === null) continue; // non-blind bids come after looking
          grid.append(button(a.tricks === 0 ? "Nil" : String(a.tricks), () => act({ type: "bid", tricks: a.tricks, blind: false }), "btn bid-btn" + (a.tricks === 0 ? " nil" : "")));
        }
        if (grid.childElementCount) panel.append(grid);
        const blind = bids.find((a) => a.blind);
        if (blind) panel.append(button("Blind nil", () => act({ type: "bid", tricks: 0, blind: true }), "btn btn-danger"));
      }
      if (see) panel.append(button("Show my cards", () => act({ type: "see_cards" }), "btn btn-gold"));
      box.append(panel);
    } else if (view.phase === "passing" && mine) {
      const need = view.rules.blind_nil_pass;
      const panel = el("div", "bid-panel");
      panel.append(el("span", "panel-title", `Choose ${need} cards for your partner (${selected.size}/${need})`));
      const b = button("Pass to partner", () => {
        act({ type: "pass_cards", cards: [...selected] });
        selected.clear();
      }, "btn btn-gold");
      b.disabled = selected.size !== need;
      panel.append(b);
      box.append(panel);
    }
  }

  function renderScores() {
    const r = view.result;
    const scores = r ? [r[0].score_after, r[1].score_after] : view.scores;
    const bags = r ? [r[0].bags_after, r[1].bags_after] : view.bags;
    for (const team of document.querySelectorAll("#scores .team")) {
      const i = Number(team.dataset.team);
      team.querySelector(".pts").textContent = scores[i];
      team.querySelector(".bags").textContent = `${bags[i]} bag${bags[i] === 1 ? "" : "s"}`;
      team.classList.toggle("ours", view.seat !== null && view.seat % 2 === i);
      const names = [i, i + 2].map((p) => (p === view.seat ? "You" : seatName(p)));
      team.querySelector(".team-name").textContent = names.join(" & ");
    }
    const limit = view.rules.round_limit;  // a study's rounds = N: no goal to reach
    $("goal").textContent = limit ? `${limit} round${limit === 1 ? "" : "s"}` : `to ${view.rules.winning_goal}`;
    const of = limit && view.round_number <= limit ? ` of ${limit}` : "";
    $("round-line").textContent = `Round ${view.round_number}${of} · dealer ${who(view.dealer)}${view.spades_broken ? " · spades broken" : ""}`;
  }

  function bidLabel(b, blind) {
    if (b === 0) return blind ? "BN" : "Nil";
    return b < 0 ? "–" : String(b);
  }

  function renderSheet() {
    const rows = [...view.history];
    if (view.result) rows.push({ round_number: view.round_number, bids: view.bids, blind: view.blind, tricks_won: view.tricks_won, result: view.result });
    const body = $("sheet").tBodies[0];
    body.replaceChildren();
    if (!rows.length) {
      const tr = el("tr", "empty");
      const td = el("td", null, "No round finished yet.");
      td.colSpan = 5;
      tr.append(td);
      body.append(tr);
      return;
    }
    for (const h of rows) {
      const tr = el("tr");
      // A finished round's replay (game/replays/): its number links to it.
      const num = el("td");
      const link = el("a", "replay-link", h.round_number);
      link.href = `/t/${cfg.id}/round/${h.round_number}/`;
      link.title = `Replay round ${h.round_number} with its double-dummy analysis`;
      num.append(link);
      tr.append(num);
      for (const [a, b] of [[0, 2], [1, 3]]) {
        tr.append(el("td", null, `${bidLabel(h.bids[a], h.blind[a])}+${bidLabel(h.bids[b], h.blind[b])} (${h.tricks_won[a] + h.tricks_won[b]})`));
      }
      for (const p of h.result) {
        const td = el("td", p.points < 0 ? "neg" : "pos");
        td.append(el("span", "delta", (p.points >= 0 ? "+" : "") + p.points), el("span", "total", p.score_after));
        td.title = `${p.bags_after} bags`;
        tr.append(td);
      }
      body.append(tr);
    }
  }

  function breakdown(result) {
    const table = el("table", "sheet breakdown");
    const head = el("tr");
    head.append(el("th"), el("th", null, "North / South"), el("th", null, "East / West"));
    table.append(head);
    const lines = [
      ["Contract", (p) => `${p.contract} (took ${p.tricks})`],
      [(p) => "Contract points", (p) => p.contract_points],
      ["Bags", (p) => p.bags],
      ["Nil", (p) => p.nil_points],
      ["Bag penalty", (p) => p.bag_penalty_points],
      ["Round", (p) => (p.points >= 0 ? "+" : "") + p.points],
      ["Score", (p) => p.score_after],
      ["Bags carried", (p) => p.bags_after],
    ];
    for (const [label, f] of lines) {
      const tr = el("tr");
      tr.append(el("th", null, typeof label === "function" ? label() : label), el("td", null, f(result[0])), el("td", null, f(result[1])));
      table.append(tr);
    }
    return table;
  }

  function renderRoundSummary() {
    // Not over an away player's table: the score sheet has the round, and the
    // "I'm back" button must stay in reach.
    const away = !$("away-note").hidden;
    if (!away && lastRound !== null && view.round_number > lastRound && view.history.length && view.match_winner === null) {
      const h = view.history[view.history.length - 1];
      $("summary-title").textContent = `Round ${h.round_number} over`;
      $("summary-body").replaceChildren(breakdown(h.result));
      $("round-summary").hidden = false;
    }
    lastRound = view.round_number;
  }

  function renderMatchOver() {
    const w = view.match_winner;
    if (w === null || w === undefined) { $("match-over").hidden = true; return; }
    if (matchShown) return;
    matchShown = true;
    $("round-summary").hidden = true;
    const r = view.result;
    const names = ["North / South", "East / West"][w];
    let text = `${names} win${r ? `, ${r[w].score_after} to ${r[1 - w].score_after}` : ""}.`;
    if (view.seat !== null) text = (view.seat % 2 === w ? "You win! " : "You lose. ") + text;
    $("match-winner").textContent = text;
    $("match-body").replaceChildren(r ? breakdown(r) : el("span"));
    $("match-over").hidden = false;
    document.body.classList.add("match-done");
    pollRematch();
  }

  function renderLastTrick() {
    const box = $("last-trick");
    if (box.hidden) return;
    box.replaceChildren();
    const t = view.tricks[view.tricks.length - 1];
    if (!t) { box.append(el("p", "muted", "No trick finished yet in this round.")); return; }
    t.cards.forEach((code, i) => {
      const pos = (t.leader + i) % 4;
      const item = el("div", "lt-item" + (pos === t.winner ? " winner" : ""));
      item.append(cardEl(code), el("span", null, who(pos)));
      box.append(item);
    });
  }

  // ----- sounds and the tab title ------------------------------------------------

  // Decoded once, after the player's first click or key (browsers allow sound
  // only from then on), and played through one AudioContext: a cue costs a
  // buffer source, not a media element.
  let audio = null;
  const buffers = {};
  function unlockAudio() {
    if (audio || !window.AudioContext) return;
    audio = new AudioContext();
    for (const [name, url] of Object.entries(cfg.sounds)) {
      fetch(url)
        .then((r) => r.arrayBuffer())
        .then((data) => audio.decodeAudioData(data))
        .then((buffer) => { buffers[name] = buffer; })
        .catch(() => { /* that cue stays silent */ });
    }
  }
  document.addEventListener("pointerdown", unlockAudio, { once: true, capture: true });
  document.addEventListener("keydown", unlockAudio, { once: true, capture: true });

  let muted = localStorage.getItem("spades.muted") === "1";
  const played = []; // every cue played, for the browser tests
  const lastPlayed = {};

  function play(name, delay = 0) {
    const now = performance.now();
    // A flood of frames (a fast replay, bots at full speed) is not a concert.
    if (muted || now - (lastPlayed[name] || -1e9) < 120) return;
    lastPlayed[name] = now;
    played.push(name);
    if (!audio || !buffers[name]) return;
    const source = audio.createBufferSource();
    const gain = audio.createGain();
    gain.gain.value = 0.6;
    source.buffer = buffers[name];
    source.connect(gain).connect(audio.destination);
    source.start(audio.currentTime + delay / 1000);
  }

  function drawMute() {
    const b = $("mute-btn");
    b.textContent = muted ? "Sound off" : "Sound on";
    b.setAttribute("aria-pressed", String(muted));
    b.title = muted ? "Turn the table's sounds on" : "Mute the table's sounds";
  }
  $("mute-btn").addEventListener("click", () => {
    muted = !muted;
    localStorage.setItem("spades.muted", muted ? "1" : "0");
    drawMute();
  });
  drawMute();

  // What changed from one view to the next, as sounds and the tab's title.
  function cue(before, now) {
    const mine = now.seat !== null && now.to_act === now.seat && now.match_winner === null && now.table.status === "playing";
    document.title = mine && document.hidden ? `Your turn \u2022 ${TITLE}` : TITLE;
    if (!before) {
      if (mine) play("turn");
      return;
    }
    const sameRound = before.round_number === now.round_number;
    // The round's last card ends the round at once: the new view holds it in its history.
    const ended = !sameRound && now.history.length ? now.history[now.history.length - 1] : null;
    const after = sameRound ? now : ended && ended.round_number === before.round_number ? ended : null;
    if (after) {
      const laid = (v) => (v.tricks ? v.tricks.length * 4 + v.trick.length : 52);
      const tricks = (v) => (v.tricks ? v.tricks.length : 13);
      if (laid(after) > laid(before)) play("card");
      if (tricks(after) > tricks(before)) play("trick", 250);
      const nilSet = [0, 1, 2, 3].some((p) => before.bids[p] === 0 && before.tricks_won[p] === 0 && after.tricks_won[p] > 0);
      if (nilSet) play("nil-set", 500);
    }
    const wasMine = before.seat !== null && before.to_act === before.seat;
    if (mine && (!wasMine || !sameRound || before.phase !== now.phase)) play("turn", 150);
  }
  document.addEventListener("visibilitychange", () => {
    if (!document.hidden) document.title = TITLE;
    else if (view && view.seat !== null && view.to_act === view.seat && view.match_winner === null) document.title = `Your turn \u2022 ${TITLE}`;
  });

  // ----- seating (before the match) -------------------------------------------

  function renderSeatsOpen() {
    for (const box of document.querySelectorAll(".seat-box")) {
      const pos = (base() + Number(box.dataset.rel)) % 4;
      const s = view.table.seats[pos];
      box.querySelector(".name").textContent = `${s ? (pos === view.seat ? "You" : s.name) : "Open"} · ${SEATS[pos]}`;
      box.querySelector(".bid").textContent = "";
      box.querySelector(".tricks").textContent = "";
      box.querySelector(".backs").replaceChildren();
      box.querySelector(".seat-timer").hidden = true;
      box.classList.remove("turn");
    }
  }

  async function post(url, data) {
    const body = new URLSearchParams(data);
    const res = await fetch(url, {
      method: "POST",
      body,
      headers: { "X-CSRFToken": $("csrf").value },
      credentials: "same-origin",
    });
    let json = {};
    try { json = await res.json(); } catch { /* not JSON */ }
    if (!res.ok) throw new Error(json.error || `the server said ${res.status}`);
    return json;
  }

  async function seatOp(data) {
    try {
      const result = await post(cfg.seatUrl, data);
      if (result.my_seat !== cfg.seat) {
        // The socket knows our seat from when it connected: start afresh.
        location.reload();
        return;
      }
      drawSeating(result);
    } catch (e) {
      showError(e.message);
    }
  }

  async function refreshSeating() {
    clearTimeout(seatingTimer);
    try {
      const res = await fetch(cfg.seatingUrl, { credentials: "same-origin" });
      if (res.ok) drawSeating(await res.json());
    } catch { /* try again with the next state */ }
  }

  function drawSeating(data) {
    if (data.status !== "open") return;
    const list = $("seat-list");
    list.replaceChildren();
    data.seats.forEach((s) => {
      const li = el("li", "seat-row " + s.state);
      const label = el("span", "seat-label");
      label.append(el("strong", null, SEATS[s.position]));
      const team = s.position % 2 === 0 ? "N/S" : "E/W";
      label.append(el("small", "muted", ` ${team}`));
      const occupant = el("span", "occupant",
        s.state === "open" ? ((data.offered || []).includes(s.position) ? "Open \u00b7 offered to bots accepting challenges" : "Open") :
        s.state === "reserved" ? "Held for an invitee" :
        (s.position === data.my_seat ? `${s.name} (you)` : s.name) + (s.state === "bot" ? ` \u2699 bot · ${s.bot}` : ""));
      const ops = el("span", "seat-ops");
      const empty = s.state === "open" || s.state === "reserved";
      if (empty && data.known && (s.state === "open" || data.may_take_reserved)) {
        ops.append(button(data.my_seat === null ? "Sit here" : "Move here", () => seatOp({ op: "sit", position: s.position }), "btn btn-small btn-gold"));
      }
      if (s.position === data.my_seat) ops.append(button("Leave", () => seatOp({ op: "leave", position: s.position }), "btn btn-small"));
      if (data.is_host) {
        if (empty) {
          const sel = el("select", "bot-select");
          sel.setAttribute("aria-label", `Bot for ${SEATS[s.position]}`);
          for (const [title, names] of cfg.botGroups) {
            const group = el("optgroup");
            group.label = title;
            for (const name of names) {
              const o = el("option", null, name);
              o.value = name;
              if (name === cfg.defaultBot) o.selected = true;
              group.append(o);
            }
            sel.append(group);
          }
          ops.append(sel, button("Add bot", () => seatOp({ op: "bot", position: s.position, bot: sel.value }), "btn btn-small"));
          ops.append(button(s.state === "reserved" ? "Open it" : "Hold for invitee", () => seatOp({ op: s.state === "reserved" ? "open" : "reserve", position: s.position }), "btn btn-small btn-ghost-dark"));
        } else if (s.state === "bot") {
          ops.append(button("Remove bot", () => seatOp({ op: "remove", position: s.position }), "btn btn-small"));
        }
      }
      li.append(label, occupant, ops);
      list.append(li);
    });
    const full = data.seats.every((s) => s.state === "human" || s.state === "bot");
    $("start-btn").hidden = !(data.is_host && full);
    $("seating-note").textContent = full ? (data.is_host ? "" : "Waiting for the host to start.") : "The match starts when all four seats are filled.";
  }

  $("start-btn").addEventListener("click", () => seatOp({ op: "start" }));

  // ----- match over, rematch ----------------------------------------------------

  async function pollRematch() {
    clearTimeout(rematchTimer);
    try {
      const res = await fetch(cfg.seatingUrl, { credentials: "same-origin" });
      if (res.ok) {
        const data = await res.json();
        if (data.rematch) {
          const a = $("rematch-link");
          a.href = data.rematch;
          a.hidden = false;
          return;
        }
      }
    } catch { /* next time */ }
    rematchTimer = setTimeout(pollRematch, 4000);
  }

  // ----- controls -------------------------------------------------------------

  $("summary-close").addEventListener("click", () => { $("round-summary").hidden = true; });
  $("match-close").addEventListener("click", () => { $("match-over").hidden = true; });
  $("last-trick-btn").addEventListener("click", () => {
    const box = $("last-trick");
    box.hidden = !box.hidden;
    $("last-trick-btn").setAttribute("aria-expanded", String(!box.hidden));
    if (view && view.table.status !== "open") renderLastTrick();
  });
  for (const b of document.querySelectorAll("#reactions button")) {
    b.addEventListener("click", () => send({ type: "react", emote: b.dataset.emote }));
  }
  const chatForm = $("chat-form");  // none for a silent watcher
  if (chatForm) {
    chatForm.addEventListener("submit", (ev) => {
      ev.preventDefault();
      const input = $("chat-input");
      const text = input.value.trim().slice(0, 200);
      if (text && send({ type: "chat", text })) input.value = "";
    });
  }
  const copy = $("copy-invite");
  if (copy) {
    copy.addEventListener("click", () => {
      const input = $("invite-url");
      input.select();
      if (navigator.clipboard) navigator.clipboard.writeText(input.value).catch(() => {});
      copy.textContent = "Copied";
    });
  }

  // For the browser tests (and curious players): the socket and the last version seen.
  window.spadesTable = {
    get socket() { return ws; },
    get version() { return lastVersion; },
    get view() { return view; },
    get sounds() { return [...played]; },
    get soundsReady() { return Object.keys(buffers).sort(); },
  };

  connect();
})();
