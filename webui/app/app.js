// The reference web UI of ccproxy. Everything a tool or the model returns is
// put into the page as text (textContent, createTextNode), never as HTML —
// but the model's text and the user's, rendered as Markdown and sanitized
// by DOMPurify into a DOM fragment (render.js).

import { Connection, login, loginCode } from "./client.js";
import { $, el, api } from "./dom.js";
import { setupMCP } from "./mcp.js";
import { configure as configureRenderer, renderEvent, renderPast, notice, scrollDown, userBubble } from "./render.js";
import { initPermissions, permissionRequested, permissionResolved, showPermissionMode, describe } from "./permissions.js";
import { initModels, showModel } from "./models.js";
import { initLayout, sessionName, promptOf, authState, showLoginHelp } from "./layout.js";
import { initNotify, notify, unnotify } from "./notify.js";
import { initTheme } from "./theme.js";
import { initComposer, setLimits, takeImages, putBack, hasImages, grow, closeMenu } from "./composer.js";
import { initHistoryManage, listData as historyListData, decorate as decorateHistory, fillPicker, isAll as historyAll } from "./history-manage.js";
import * as store from "./store.js";
import { initRewind, askRewind } from "./rewind.js";
import { showUsage } from "./usage.js";
import { setupHistorySearch } from "./history-search.js";

const { state } = store; // read here, changed through store's functions
// The status line while a permission dialog waits.
const WAITING = "waiting for your answer…";
// ended reports whether live session v takes no more turns.
const ended = (v) => ["exited", "closed"].includes(v.state);

// view returns the view of live session id, made the first time.
const view = (id) => store.liveView(id, newView);

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

const conn = new Connection(new URL(api("/v1/ws"), location.href).href.replace(/^http/, "ws"), {
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
      for (const v of store.closeMissing(list.map((s) => s.session))) await subscribe(v);
      if (!state.current && !state.shownPast && list.length) select(list[list.length - 1].session);
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
  store.markSubscribed(v);
  showModel(v.id, r.model, r.models);
  showUsage(v.id, r.usage);
  updateSession(v.id, r.state);
}

store.on("capabilities", () => {
  $("#history").hidden = !store.has("history");
  if (store.has("history")) loadHistory(false);
});
const mcp = setupMCP(conn);

const pushes = {
  hello(d) {
    store.setCapabilities(d.capabilities);
    showDemo(d.claude && d.claude.name === "ccproxy-replay");
    setLimits(d.limits);
  },
  "session/event"({ session, seq, event }) {
    const v = view(session);
    if (!store.advanceSeq(v, seq)) return; // already rendered (replay after reconnect)
    renderEvent(v, event);
    if (!v.info.prompt) store.setPrompt(v, promptOf(event));
  },
  "session/state"({ session, state: st, claudeSessionId, permissionMode, model, models, usage, title }) {
    const v = view(session);
    showUsage(session, usage);
    if (v.state === "running" && st === "idle") notify(`turn:${session}`, "Claude finished", `${sessionName(v, state.sessions.values())}`, () => select(session));
    showPermissionMode(session, permissionMode);
    showModel(session, model, models);
    // A title: the session was renamed (here, in another tab, by another client).
    updateSession(session, st, claudeSessionId || title ? { ...(claudeSessionId && { claudeSessionId }), ...(title && { title }) } : undefined);
  },
  "session/exited"({ session, code, signal, stderrTail, reason }) {
    const how = signal ? `killed by ${signal}` : `exited with code ${code}`;
    notice(view(session), `claude ${how}${reason ? ` (${reason})` : ""}${stderrTail ? "\n" + stderrTail : ""}`, code !== 0 || !!signal);
    if (store.has("history")) loadHistory(false); // the session is history now
  },
  "session/gap"({ session, firstSeq }) {
    notice(view(session), `Some earlier events are no longer available (the log starts at #${firstSeq}).`, true);
  },
  "permission/request"(d) {
    if (d.session === state.current) $("#status-line").textContent = WAITING;
    if (permissionRequested(d)) notify(`perm:${d.session}:${d.requestId}`, "Claude is waiting for you", describe(d), () => select(d.session));
  },
  "permission/resolved"(d) {
    const { session, behavior, reason } = d;
    unnotify(`perm:${session}:${d.requestId}`);
    if (session === state.current && $("#status-line").textContent === WAITING) $("#status-line").textContent = "";
    const what = { allow: "Allowed", deny: "Denied", cancelled: "Permission request withdrawn" }[behavior] || `Permission: ${behavior}`;
    const why = { timeout: "no answer in time", cancelled: "claude withdrew it", session_exited: "the session ended" }[reason];
    notice(view(session), why ? `${what} (${why})` : what);
    permissionResolved(d);
  },
};

// ---- sessions ----

// updateSession records a session's state and info (both optional).
function updateSession(id, st, info) {
  const v = view(id);
  if (info && info.permissionMode) showPermissionMode(id, info.permissionMode);
  store.updateSession(v, st, info);
}

// The list, and the composer when the session it shows changed.
store.on("sessions", (id) => {
  renderSessions();
  if (id !== null && id === state.current) updateComposer();
});
store.on("shown", () => {
  markHistory();
  renderSessions();
  updateComposer();
});

function renderSessions() {
  const ul = $("#sessions");
  ul.replaceChildren();
  for (const v of state.sessions.values()) {
    if (v.state === "closed") continue;
    const li = el("li");
    li.dataset.session = v.id;
    li.setAttribute("aria-current", String(v.id === state.current));
    if (v.info.claudeSessionId) li.dataset.claudeSession = v.info.claudeSessionId;
    const st = el("span", "state", v.state);
    if (v.state === "suspended") st.title = "idle: claude was stopped to free memory; your next message resumes it";
    li.append(el("span", "name", sessionName(v, state.sessions.values())), st);
    li.title = `${v.info.cwd || ""} ${v.info.model || ""} (${v.id})`.trim();
    li.onclick = () => select(v.id);
    ul.append(li);
  }
}

function select(id) {
  const v = view(id);
  $("#history-bar").hidden = true;
  $("#empty").hidden = true;
  $("#log").replaceChildren(v.log);
  store.showLive(id);
  if (!v.subscribed) subscribe(v).catch((err) => notice(v, err.message, true));
  scrollDown(true);
}

function updateComposer() {
  const v = state.current && state.sessions.get(state.current);
  const live = v && !ended(v);
  // With no session (and no past one) shown, Send creates one first.
  $("#send").disabled = v ? !live : !!state.shownPast;
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
  if ((!text.trim() && !hasImages()) || (!state.current && state.shownPast)) return;
  if (!state.current && !(await createSession())) return;
  const session = state.current;
  const v = view(session);
  const images = takeImages();
  store.setPrompt(v, text, true); // named by it at the next render
  const bubble = userBubble(v, text, images.map((i) => i.src));
  bubble.classList.add("pending");
  v.pendingTurns.push({ text, bubble });
  ta.value = "";
  closeMenu();
  grow();
  const data = { session, text };
  if (images.length) data.images = images.map(({ mediaType, data }) => ({ mediaType, data }));
  try {
    await conn.request("session/send", data);
  } catch (err) {
    // Not sent (no connection) or refused by the proxy: the message goes
    // back in the box to send again, its bubble goes. (A connection lost
    // after the send leaves it: the proxy may have it.)
    if (err.unsent || err.code) {
      const i = v.pendingTurns.findIndex((t) => t.bubble === bubble);
      if (i >= 0) v.pendingTurns.splice(i, 1);
      bubble.remove();
      if (!ta.value) ta.value = text;
      putBack(images);
      grow();
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
  const v = state.current && state.sessions.get(state.current);
  const ta = $("#composer textarea");
  if (!$("#login-error").hidden) return; // showLoginHelp's
  if (!v && state.shownPast) ta.placeholder = "A past session: press Continue (above) to go on with it";
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
  const session = state.current;
  if (session) conn.request("session/interrupt", { session }).catch((err) => notice(view(session), err.message, true));
});

configureRenderer({
  request: (type, data) => conn.request(type, data),
  rewind: askRewind, // "Rewind to here" on a user message (rewind.js)
});

// ---- history: past sessions (history/list, history/read) ----

async function loadHistory(more) {
  const data = historyListData({ limit: 200 });
  if (!more) fillPicker();
  if (more && state.historyNext) data.cursor = state.historyNext;
  const empty = $("#history-empty");
  try {
    const r = await conn.request("history/list", data);
    const ul = $("#history-list");
    if (!more) ul.replaceChildren();
    for (const s of r.sessions) ul.append(historyItem(s));
    store.setHistoryNext(r.next);
    $("#history-more").hidden = !state.historyNext;
    empty.textContent = historyAll() ? "No past sessions." : "No past sessions in this project.";
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
  decorateHistory(li, s);
  return li;
}

function filterHistory() {
  const q = $("#history-search").value.trim().toLowerCase();
  for (const li of $("#history-list").children) li.hidden = !!q && !li.dataset.title.toLowerCase().includes(q);
}

function markHistory() {
  for (const li of $("#history-list").children) li.setAttribute("aria-current", String(li.dataset.history === state.shownPast));
}

$("#history-search").addEventListener("input", filterHistory);
$("#history-more").addEventListener("click", () => loadHistory(true));
setupHistorySearch({ request: (type, data) => conn.request(type, data), has: (cap) => store.has(cap), open: (s) => openPast(s) });

// openPast shows a past session, rendered by the same code as live ones.
async function openPast(s) {
  const [v, first] = store.pastView(s, () => {
    const v = newView(`history:${s.id}`);
    v.state = "history";
    v.past = s;
    v.next = "";
    return v;
  });
  $("#empty").hidden = true;
  const bar = $("#history-bar");
  bar.hidden = false;
  bar.dataset.history = s.id;
  bar.querySelector(".history-title").textContent = s.title || s.id;
  const when = new Date(s.updated);
  bar.querySelector(".history-meta").textContent = `${isNaN(when) ? "" : when.toLocaleString()} · ${s.project || ""}`;
  $("#status-line").textContent = "";
  $("#log").replaceChildren(v.log);
  store.showPast(s.id);
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
  const v = state.shownPast && state.past.get(state.shownPast);
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
  name: (session) => sessionName(view(session), state.sessions.values()),
});
initModels({
  conn,
  notice: (session, text, isError) => notice(view(session), text, isError),
});
// Suggested prompts on the empty state: a click sends one (a new session
// first, as Send does with none shown).
const SUGGESTIONS = {
  real: ["Explain what this project does and how it is laid out", "Find the TODO and FIXME comments and sum them up", "Which tests cover the main package, and what do they miss?"],
  demo: ["Hi! What does this proxy do, and what am I looking at?", "Show me an MCP tool that returns an image", "Run a shell command, asking me first"],
};

function showSuggestions(demo) {
  const ul = $("#suggestions");
  ul.replaceChildren();
  for (const text of SUGGESTIONS[demo ? "demo" : "real"]) {
    const b = el("button", "suggestion", text);
    b.type = "button";
    b.onclick = () => {
      const ta = $("#composer textarea");
      ta.value = text;
      ta.dispatchEvent(new Event("input", { bubbles: true }));
      $("#composer").requestSubmit();
    };
    const li = el("li");
    li.append(b);
    ul.append(li);
  }
}

// showDemo says, in the header and on the empty state, that the proxy
// replays its built-in demo (hello's claude is ccproxy-replay).
function showDemo(demo) {
  $("#demo-badge").hidden = !demo;
  $("#demo-note").hidden = !demo;
  document.body.dataset.demo = demo ? "true" : "false";
  showSuggestions(demo);
}

showSuggestions(false);
initTheme($("#theme"));
initRewind({ conn });
initLayout();
initNotify();
initComposer({ request: (type, data) => conn.request(type, data) });
initHistoryManage({
  conn, reload: loadHistory, has: store.has,
  // A renamed session that runs here is named so in the sessions list too.
  renamed: (id, title) => {
    for (const v of state.sessions.values()) if (v.info.claudeSessionId === id) updateSession(v.id, v.state, { title });
  },
});
composerHint();

// checkLogin shows how to log in, and stops reconnecting, when the proxy
// says this browser is not logged in (why: what to say it is about).
async function checkLogin(why) {
  const n = store.nextLoginCheck();
  if ((await authState()) !== "login" || n !== state.loginChecks) return false;
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
