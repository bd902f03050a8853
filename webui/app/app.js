// The reference web UI of ccproxy. Everything a tool or the model returns is
// put into the page as text (textContent, createTextNode), never as HTML —
// but the model's text, rendered as Markdown and sanitized by DOMPurify into
// a DOM fragment (render.js).

import { Connection, login, loginCode } from "./client.js";
import { $, el } from "./dom.js";
import { setupMCP } from "./mcp.js";
import { configure as configureRenderer, renderEvent, renderPast, notice, scrollDown, userBubble } from "./render.js";
import { initPermissions, permissionRequested, permissionResolved, showPermissionMode, describe } from "./permissions.js";
import { initModels, showModel } from "./models.js";
import { initLayout, sessionName, promptOf, authState, showLoginHelp } from "./layout.js";
import { initNotify, notify, unnotify } from "./notify.js";

const sessions = new Map(); // id -> view
let current = null;
// The status line while a permission dialog waits.
const WAITING = "waiting for your answer…";
// ended reports whether live session v takes no more turns.
const ended = (v) => ["exited", "closed"].includes(v.state);

function view(id) {
  let v = sessions.get(id);
  if (!v) {
    v = newView(id);
    sessions.set(id, v);
  }
  return v;
}

// newView returns what the renderer keeps of one conversation: a live
// session's (view) or a past one's (openPast).
function newView(id) {
  const v = {
    id, state: "starting", lastSeq: 0, subscribed: false,
    log: el("div", "session-log"),
    msgs: new Map(), // message id -> {el, blocks: Map(index -> block), streamed}
    streaming: new Map(), // parent_tool_use_id|"main" -> message id being streamed
    tools: new Map(), // tool_use id -> card
    pendingTurns: [], // bubbles sent but not yet echoed by claude
    info: {},
  };
  v.log.dataset.session = id;
  return v;
}

// ---- connection ----

const conn = new Connection(`${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/v1/ws`, {
  onStatus(state, code, reason) {
    const c = $("#conn");
    c.dataset.state = state;
    c.textContent = state === "open" ? "connected" : state === "closed" ? "reconnecting…" : "connecting…";
    c.title = state === "closed" ? `connection lost (websocket close ${code}${reason ? ": " + reason : ""}); retrying` : "connection";
    document.body.dataset.conn = state; // while not open, the MCP chips show their last known state, dimmed
    if (state === "closed") checkLogin("restarted");
    showModel(null); // the picker is off while the connection is down
  },
  async onOpen() {
    // How many times the page has connected: > 1 means it reconnected.
    document.body.dataset.connects = String(Number(document.body.dataset.connects || 0) + 1);
    try {
      await conn.request("mcp/subscribe");
      const { sessions: list } = await conn.request("session/list");
      for (const s of list) updateSession(s.session, s.state, s);
      for (const v of sessions.values()) {
        if (!list.some((s) => s.session === v.id)) {
          v.state = "closed";
          continue;
        }
        await subscribe(v);
      }
      if (!current && !shownPast && list.length) select(list[list.length - 1].session);
      renderSessions();
    } catch (err) {
      notice(null, `could not resume: ${err.message}`, true);
    }
  },
  onPush(type, d) {
    const handler = pushes[type];
    if (handler) handler(d);
    mcp.push(type, d);
  },
});

async function subscribe(v) {
  const r = await conn.request("session/subscribe", { session: v.id, afterSeq: v.lastSeq });
  v.subscribed = true;
  showModel(v.id, r.model, r.models);
  updateSession(v.id, r.state);
}

let capabilities = [];
const mcp = setupMCP(conn);

const pushes = {
  hello(d) {
    capabilities = d.capabilities || [];
    $("#history").hidden = !capabilities.includes("history");
    if (capabilities.includes("history")) loadHistory(false);
  },
  "session/event"({ session, seq, event }) {
    const v = view(session);
    if (seq <= v.lastSeq) return; // already rendered (replay after reconnect)
    v.lastSeq = seq;
    renderEvent(v, event);
    if (!v.info.prompt && (v.info.prompt = promptOf(event))) renderSessions();
  },
  "session/state"({ session, state, claudeSessionId, permissionMode, model, models }) {
    const v = view(session);
    if (claudeSessionId) v.info.claudeSessionId = claudeSessionId;
    if (v.state === "running" && state === "idle") notify(`turn:${session}`, "Claude finished", `${sessionName(v, sessions.values())}`, () => select(session));
    showPermissionMode(session, permissionMode);
    showModel(session, model, models);
    updateSession(session, state);
  },
  "session/exited"({ session, code, signal, stderrTail, reason }) {
    const how = signal ? `killed by ${signal}` : `exited with code ${code}`;
    notice(view(session), `claude ${how}${reason ? ` (${reason})` : ""}${stderrTail ? "\n" + stderrTail : ""}`, code !== 0 || !!signal);
    if (capabilities.includes("history")) loadHistory(false); // the session is history now
  },
  "session/gap"({ session, firstSeq }) {
    notice(view(session), `Some earlier events are no longer available (the log starts at #${firstSeq}).`, true);
  },
  "permission/request"(d) {
    if (d.session === current) $("#status-line").textContent = WAITING;
    if (permissionRequested(d)) notify(`perm:${d.session}:${d.requestId}`, "Claude is waiting for you", describe(d), () => select(d.session));
  },
  "permission/resolved"(d) {
    const { session, behavior, reason } = d;
    unnotify(`perm:${session}:${d.requestId}`);
    if (session === current && $("#status-line").textContent === WAITING) $("#status-line").textContent = "";
    const what = { allow: "Allowed", deny: "Denied", cancelled: "Permission request withdrawn" }[behavior] || `Permission: ${behavior}`;
    const why = { timeout: "no answer in time", cancelled: "claude withdrew it", session_exited: "the session ended" }[reason];
    notice(view(session), why ? `${what} (${why})` : what);
    permissionResolved(d);
  },
};

// ---- sessions ----

function updateSession(id, state, info) {
  const v = view(id);
  if (state) v.state = state;
  if (info) Object.assign(v.info, info);
  if (info && info.permissionMode) showPermissionMode(id, info.permissionMode);
  renderSessions();
  if (id === current) updateComposer();
}

function renderSessions() {
  const ul = $("#sessions");
  ul.replaceChildren();
  for (const v of sessions.values()) {
    if (v.state === "closed") continue;
    const li = el("li");
    li.dataset.session = v.id;
    li.setAttribute("aria-current", String(v.id === current));
    if (v.info.claudeSessionId) li.dataset.claudeSession = v.info.claudeSessionId;
    li.append(el("span", "name", sessionName(v, sessions.values())), el("span", "state", v.state));
    li.title = `${v.info.cwd || ""} ${v.info.model || ""} (${v.id})`.trim();
    li.onclick = () => select(v.id);
    ul.append(li);
  }
}

function select(id) {
  current = id;
  shownPast = null;
  $("#history-bar").hidden = true;
  markHistory();
  const v = view(id);
  $("#empty").hidden = true;
  $("#log").replaceChildren(v.log);
  if (!v.subscribed) subscribe(v).catch((err) => notice(v, err.message, true));
  renderSessions();
  updateComposer();
  scrollDown(true);
}

function updateComposer() {
  const v = current && sessions.get(current);
  const live = v && !ended(v);
  // With no session (and no past one) shown, Send creates one first.
  $("#send").disabled = v ? !live : !!shownPast;
  $("#interrupt").disabled = !(v && v.state === "running");
  showPermissionMode(null, "", live);
  showModel(null, "", undefined, !!live);
  composerHint();
}

// createSession creates a session as the sidebar's form says and shows
// it; it returns its id, or null when the proxy refused.
async function createSession() {
  const f = $("#new-session");
  const data = {};
  if (f.cwd.value.trim()) data.cwd = f.cwd.value.trim();
  if (f.model.value.trim()) data.model = f.model.value.trim();
  try {
    const r = await conn.request("session/create", data);
    updateSession(r.session, r.state || "starting", { cwd: r.cwd || data.cwd, model: data.model });
    select(r.session);
    return r.session;
  } catch (err) {
    alert(`Could not create the session: ${err.message}`);
    return null;
  }
}

$("#new-session").addEventListener("submit", (e) => {
  e.preventDefault();
  createSession();
});

$("#composer").addEventListener("submit", async (e) => {
  e.preventDefault();
  const ta = e.target.text;
  const text = ta.value;
  if (!text.trim() || (!current && shownPast)) return;
  if (!current && !(await createSession())) return;
  const v = view(current);
  if (!v.info.prompt) v.info.prompt = text;
  const bubble = userBubble(v, text, []);
  bubble.classList.add("pending");
  v.pendingTurns.push({ text, bubble });
  ta.value = "";
  try {
    await conn.request("session/send", { session: current, text });
  } catch (err) {
    // Not sent (no connection) or refused by the proxy: the message goes
    // back in the box to send again, its bubble goes. (A connection lost
    // after the send leaves it: the proxy may have it.)
    if (err.unsent || err.code) {
      const i = v.pendingTurns.findIndex((t) => t.bubble === bubble);
      if (i >= 0) v.pendingTurns.splice(i, 1);
      bubble.remove();
      if (!ta.value) ta.value = text;
      notice(v, `not sent: ${err.message}; your message is back in the box`, true);
      return;
    }
    notice(v, `not sent: ${err.message}`, true);
  }
});

// Enter sends, Shift+Enter is a new line; on a touch screen (no Shift on
// its keyboard) Enter is a new line and the Send button sends.
// The box also says why Send is off: a past session is only shown until
// Continue, an ended session takes no more turns.
const touch = matchMedia("(pointer: coarse)");
function composerHint() {
  const v = current && sessions.get(current);
  const ta = $("#composer textarea");
  if (!$("#login-error").hidden) return; // showLoginHelp's
  if (!v && shownPast) ta.placeholder = "A past session: press Continue (above) to go on with it";
  else if (v && ended(v)) ta.placeholder = "This session has ended: start a new one from the sessions";
  else ta.placeholder = touch.matches ? "Message Claude… (Send to send)" : "Message Claude… (Enter to send, Shift+Enter for a new line)";
}
touch.addEventListener("change", composerHint);
$("#composer textarea").addEventListener("keydown", (e) => {
  if (e.key === "Enter" && !e.shiftKey && !e.isComposing && !touch.matches) { // not while an IME composes
    e.preventDefault();
    $("#composer").requestSubmit();
  }
});

$("#interrupt").addEventListener("click", () => {
  if (current) conn.request("session/interrupt", { session: current }).catch((err) => notice(view(current), err.message, true));
});

configureRenderer({
  isCurrent: (v) => v.id === current,
  onInfo: () => renderSessions(),
  request: (type, data) => conn.request(type, data),
});

// ---- history: past sessions (history/list, history/read) ----

// capabilities (of the proxy, from hello) is declared with the pushes above.
const past = new Map(); // Claude session id -> view of a past session
let shownPast = null; // the Claude session id shown, if a past one is
let historyNext = ""; // cursor of the next page of history/list

async function loadHistory(more) {
  const data = { limit: 200 };
  if (more && historyNext) data.cursor = historyNext;
  const empty = $("#history-empty");
  try {
    const r = await conn.request("history/list", data);
    const ul = $("#history-list");
    if (!more) ul.replaceChildren();
    for (const s of r.sessions) ul.append(historyItem(s));
    historyNext = r.next || "";
    $("#history-more").hidden = !historyNext;
    empty.textContent = "No past sessions in this project.";
    empty.hidden = r.total !== 0;
    filterHistory();
    markHistory();
  } catch (err) {
    empty.hidden = false;
    empty.textContent = `History unavailable: ${err.message}`;
  }
}

function historyItem(s) {
  const li = el("li");
  li.dataset.history = s.id;
  li.dataset.title = s.title || "";
  li.title = s.title || s.id;
  const when = new Date(s.updated);
  li.append(el("span", "title", s.title || "(untitled)"),
    el("span", "meta", `${isNaN(when) ? "" : when.toLocaleString()} · ${s.messages} message${s.messages === 1 ? "" : "s"}`));
  li.onclick = () => openPast(s);
  return li;
}

function filterHistory() {
  const q = $("#history-search").value.trim().toLowerCase();
  for (const li of $("#history-list").children) li.hidden = !!q && !li.dataset.title.toLowerCase().includes(q);
}

function markHistory() {
  for (const li of $("#history-list").children) li.setAttribute("aria-current", String(li.dataset.history === shownPast));
}

$("#history-search").addEventListener("input", filterHistory);
$("#history-more").addEventListener("click", () => loadHistory(true));

// openPast shows a past session, rendered by the same code as live ones.
async function openPast(s) {
  let v = past.get(s.id);
  const first = !v;
  if (first) {
    v = newView(`history:${s.id}`);
    v.state = "history";
    v.past = s;
    v.next = "";
    past.set(s.id, v);
  }
  current = null;
  shownPast = s.id;
  $("#empty").hidden = true;
  const bar = $("#history-bar");
  bar.hidden = false;
  bar.dataset.history = s.id;
  bar.querySelector(".history-title").textContent = s.title || s.id;
  const when = new Date(s.updated);
  bar.querySelector(".history-meta").textContent = `${isNaN(when) ? "" : when.toLocaleString()} · ${s.project || ""}`;
  $("#status-line").textContent = "";
  $("#log").replaceChildren(v.log);
  renderSessions();
  markHistory();
  updateComposer();
  if (first) await readPast(v);
}

// readPast renders the next page of a past session, and a button for the
// one after.
async function readPast(v) {
  if (v.loading) return;
  v.loading = true;
  const data = { id: v.past.id, limit: 200 };
  if (v.past.project) data.project = v.past.project;
  if (v.next) data.cursor = v.next;
  try {
    const r = await conn.request("history/read", data);
    if (v.moreButton) v.moreButton.remove();
    for (const e of r.events) renderPast(v, e.event);
    v.next = r.next;
    if (r.corrupt) notice(v, `${r.corrupt} damaged line${r.corrupt === 1 ? " was" : "s were"} skipped`, true);
    if (r.more) {
      v.moreButton = el("button", "more-events", "Show more");
      v.moreButton.type = "button";
      v.moreButton.onclick = () => readPast(v);
      v.log.append(v.moreButton);
    }
    v.log.dataset.loaded = "true";
  } catch (err) {
    notice(v, `could not read the session: ${err.message}`, true);
  } finally {
    v.loading = false;
  }
}

// Continue: a new live session resuming the past one (session/create
// {resume}) in its project, showing a copy of what came before.
$("#history-continue").addEventListener("click", async () => {
  const v = shownPast && past.get(shownPast);
  if (!v) return;
  const data = { resume: v.past.id };
  if (v.past.project) data.cwd = v.past.project;
  try {
    const r = await conn.request("session/create", data);
    updateSession(r.session, r.state || "starting", { cwd: r.cwd || data.cwd, title: v.past.title || undefined, resume: v.past.id });
    const live = view(r.session);
    for (const n of v.log.childNodes) {
      if (n.tagName === "BUTTON") continue;
      const c = n.cloneNode(true);
      for (const b of c.querySelectorAll ? c.querySelectorAll("button") : []) b.remove();
      live.log.append(c);
    }
    live.log.append(el("div", "continued", "continued"));
    select(r.session);
  } catch (err) {
    alert(`Could not continue the session: ${err.message}`);
  }
});

// ---- start ----

initPermissions({
  conn,
  notice: (session, text, isError) => notice(view(session), text, isError),
  current: () => current,
  name: (session) => sessionName(view(session), sessions.values()),
});
initModels({
  conn,
  notice: (session, text, isError) => notice(view(session), text, isError),
  current: () => current,
});
initLayout();
initNotify();
composerHint();

// checkLogin shows how to log in, and stops reconnecting, when the proxy
// says this browser is not logged in (why: what to say it is about).
let loginChecks = 0;
async function checkLogin(why) {
  const n = ++loginChecks;
  if ((await authState()) !== "login" || n !== loginChecks) return false;
  conn.close();
  showLoginHelp(why);
  return true;
}

// A login link opened in this tab changes only the fragment, which loads
// nothing: start again with it.
window.addEventListener("hashchange", () => {
  if (loginCode()) location.reload();
});

// The login link's code (if any) is traded for the cookie; a spent link
// opened in a browser that is still logged in just carries on.
login()
  .then(() => null, (err) => err)
  .then(async (err) => {
    if ((await authState()) === "login") {
      showLoginHelp(!err ? "none" : err.status === 401 ? "spent" : "error", err && err.message);
      return;
    }
    conn.connect();
  });
