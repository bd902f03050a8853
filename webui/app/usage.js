// The usage meter of the composer: how full the shown session's context
// window is (a <meter>, and "13k / 1M"), and the tokens its turns used
// (in, out); the title has the rest (cache, cost, the last turn). From
// session/state's and the subscribe reply's usage (SPEC §4). Hidden until
// a turn of the session has ended. Put into the page as text.

import { $, el } from "./dom.js";
import { state, on } from "./store.js";

const known = new Map(); // session -> usage

// showUsage records a session's usage (absent: unchanged) and updates the
// meter.
export function showUsage(session, usage) {
  if (session && usage) known.set(session, usage);
  render();
}

on("shown", () => render());

function short(n) {
  if (n >= 1e6) return `${+(n / 1e6).toFixed(n >= 1e7 ? 0 : 1)}M`;
  if (n >= 1e3) return `${+(n / 1e3).toFixed(n >= 1e4 ? 0 : 1)}k`;
  return String(n);
}

function box() {
  let m = $("#usage-meter");
  if (!m) {
    m = el("span", "usage-meter");
    m.id = "usage-meter";
    $("#interrupt").before(m);
  }
  return m;
}

function render() {
  const m = box();
  const u = state.current && known.get(state.current);
  m.hidden = !u;
  if (!u) return;
  const parts = [];
  if (u.contextWindow > 0) {
    const meter = el("meter");
    meter.min = 0;
    meter.max = u.contextWindow;
    meter.value = u.contextTokens || 0;
    meter.high = u.contextWindow * 0.8;
    meter.optimum = 0;
    parts.push(meter, el("span", "usage-context", `${short(u.contextTokens || 0)} / ${short(u.contextWindow)}`));
  }
  const t = u.total;
  parts.push(el("span", "usage-tokens", `${short(t.inputTokens + t.cacheReadTokens + t.cacheCreationTokens)} in · ${short(t.outputTokens)} out`));
  m.replaceChildren(...parts);
  const l = u.lastTurn;
  m.title = [
    u.contextWindow > 0 ? `Context: ${(u.contextTokens || 0).toLocaleString()} of ${u.contextWindow.toLocaleString()} tokens (${Math.round((100 * (u.contextTokens || 0)) / u.contextWindow)}%)` : "",
    `${u.turns} turn${u.turns === 1 ? "" : "s"}: ${t.inputTokens.toLocaleString()} input, ${t.outputTokens.toLocaleString()} output, ${t.cacheReadTokens.toLocaleString()} cache read, ${t.cacheCreationTokens.toLocaleString()} cache write tokens, $${t.costUsd.toFixed(4)}`,
    l ? `Last turn: ${l.inputTokens.toLocaleString()} in, ${l.outputTokens.toLocaleString()} out, $${l.costUsd.toFixed(4)}` : "",
  ].filter(Boolean).join("\n");
}
