// A Spades bot in JavaScript, written from docs/bot-protocol.md alone: no
// package, nothing of the site; the WebSocket built into Node (22 and later;
// Node 20 with --experimental-websocket).
//
//   SPADES_BOT_TOKEN=sbt_... node --experimental-websocket spades_bot.mjs \
//       ws://localhost:8000/ws/bot/ [--matches N] [--seed S]
//
// It plays a random legal action at every decision and, when N matches have
// ended, prints one JSON line: {"matches": [...], "errors": [...]}.

const PROTOCOL = "spades-bot/1";
const args = process.argv.slice(2);
const option = (name, fallback) => {
  const at = args.indexOf(name);
  return at >= 0 ? Number(args[at + 1]) : fallback;
};
const url = args.find((a) => a.startsWith("ws")) ?? "ws://localhost:8000/ws/bot/";
const wanted = option("--matches", 0); // 0: play until stopped
let seed = option("--seed", Date.now()) >>> 0;

// mulberry32: a small seeded generator, so that a run can be repeated.
function random() {
  seed = (seed + 0x6d2b79f5) >>> 0;
  let t = seed;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}

const token = process.env.SPADES_BOT_TOKEN;
if (!token) {
  console.error("set SPADES_BOT_TOKEN to your bot's token");
  process.exit(2);
}
const finished = [];
const errors = [];
const socket = new WebSocket(url, { headers: { Authorization: `Bearer ${token}` } });
const send = (frame) => socket.send(JSON.stringify(frame));

socket.addEventListener("message", (event) => {
  const frame = JSON.parse(event.data);
  switch (frame.type) {
    case "hello":
      send({ type: "ready", protocol: PROTOCOL });
      break;
    case "decision": {
      const legal = frame.legal_actions;
      const action = legal[Math.floor(random() * legal.length)];
      send({ type: "action", table: frame.table, seat: frame.seat, version: frame.version, action });
      break;
    }
    case "match_end":
      finished.push(frame.table);
      if (wanted && finished.length >= wanted) socket.close(1000);
      break;
    case "error":
      errors.push(frame);
      break;
    default: // seated, table_started, trick, round_end...: nothing to answer
  }
});
socket.addEventListener("close", (event) => {
  console.log(JSON.stringify({ matches: finished, errors, close: event.code }));
  process.exit(wanted && finished.length >= wanted ? 0 : 1);
});
socket.addEventListener("error", () => {}); // the close event follows and reports it
