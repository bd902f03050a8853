// The reference web UI of ccproxy. Everything a tool or the model returns is
// put into the page as text (textContent, createTextNode), never as HTML.

import { Connection, login } from "./client.js";
import { initPermissions, permissionRequested, permissionResolved, showPermissionMode, describe } from "./permissions.js";
import { initLayout, sessionName, promptOf, authState, showLoginHelp } from "./layout.js";
import { initNotify, notify, unnotify } from "./notify.js";

const $ = (sel) => document.querySelector(sel);
const el = (tag, cls, text) => {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
};

const sessions = new Map(); // id -> view
let current = null;

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
    c.textContent = state === "open" ? "connected" : state === "closed" ? `reconnecting… (${code}${reason ? ": " + reason : ""})` : "connecting…";
    if (state === "closed") checkLogin("restarted");
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
  },
});

async function subscribe(v) {
  const r = await conn.request("session/subscribe", { session: v.id, afterSeq: v.lastSeq });
  v.subscribed = true;
  updateSession(v.id, r.state);
}

let capabilities = [];

const pushes = {
  hello(d) {
    capabilities = d.capabilities || [];
    $("#history").hidden = !capabilities.includes("history");
    if (capabilities.includes("history")) loadHistory(false);
    $("#mcp-add").hidden = !capabilities.includes("mcp.manage");
  },
  "session/event"({ session, seq, event }) {
    const v = view(session);
    if (seq <= v.lastSeq) return; // already rendered (replay after reconnect)
    v.lastSeq = seq;
    renderEvent(v, event);
    if (!v.info.prompt && (v.info.prompt = promptOf(event))) renderSessions();
  },
  "session/state"({ session, state, claudeSessionId, permissionMode }) {
    const v = view(session);
    if (claudeSessionId) v.info.claudeSessionId = claudeSessionId;
    if (v.state === "running" && state === "idle") notify(`turn:${session}`, "Claude finished", `${sessionName(v, sessions.values())}`, () => select(session));
    showPermissionMode(session, permissionMode);
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
    if (permissionRequested(d)) notify(`perm:${d.session}:${d.requestId}`, "Claude is waiting for you", describe(d), () => select(d.session));
  },
  "permission/resolved"(d) {
    const { session, behavior, reason } = d;
    unnotify(`perm:${session}:${d.requestId}`);
    notice(view(session), `permission ${behavior}${reason && reason !== "answered" ? ` (${reason})` : ""}`);
    permissionResolved(d);
  },
  "mcp/status"({ servers }) {
    renderMCP(servers);
  },
  "mcp/config"() {},
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
  const live = v && !["exited", "closed"].includes(v.state);
  // With no session (and no past one) shown, Send creates one first.
  $("#send").disabled = v ? !live : !!shownPast;
  $("#interrupt").disabled = !(v && v.state === "running");
  showPermissionMode(null, "", live);
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
    notice(v, `not sent: ${err.message}`, true);
  }
});

$("#composer textarea").addEventListener("keydown", (e) => {
  if (e.key === "Enter" && !e.shiftKey && !e.isComposing) { // not while an IME composes
    e.preventDefault();
    $("#composer").requestSubmit();
  }
});

$("#interrupt").addEventListener("click", () => {
  if (current) conn.request("session/interrupt", { session: current }).catch((err) => notice(view(current), err.message, true));
});

// ---- events ----

function renderEvent(v, ev) {
  switch (ev.type) {
    case "system":
      if (ev.subtype === "init") {
        v.info.model = ev.model;
        v.info.cwd = ev.cwd;
        renderSessions();
      } else if (ev.subtype === "status") {
        if (v.id === current) $("#status-line").textContent = ev.status ? `${ev.status}…` : "";
      } else if (ev.subtype === "api_retry") {
        notice(v, `API error, retrying (attempt ${ev.attempt ?? "?"})`, true);
      }
      return;
    case "stream_event":
      return streamEvent(v, ev);
    case "assistant":
      return assistant(v, ev);
    case "user":
      return user(v, ev);
    case "result":
      return result(v, ev);
    case "ccproxy":
      return notice(v, ev.subtype === "oversized_line" ? `a ${ev.bytes}-byte line from claude was too long to show` : `claude: ${ev.text}`, ev.subtype !== "noise");
  }
}

function message(v, id) {
  let m = v.msgs.get(id);
  if (!m) {
    m = { el: el("div", "msg assistant"), blocks: new Map(), streamed: false };
    v.msgs.set(id, m);
    v.log.append(m.el);
  }
  return m;
}

function streamEvent(v, ev) {
  const e = ev.event || {};
  const key = ev.parent_tool_use_id || "main";
  if (e.type === "message_start") {
    const m = message(v, e.message.id);
    m.streamed = true;
    v.streaming.set(key, e.message.id);
    return;
  }
  const m = v.msgs.get(v.streaming.get(key));
  if (!m) return;
  if (e.type === "content_block_start") {
    const b = e.content_block || {};
    m.blocks.set(e.index, newBlock(v, m, b));
  } else if (e.type === "content_block_delta") {
    const blk = m.blocks.get(e.index);
    const d = e.delta || {};
    if (!blk) return;
    if (d.type === "text_delta") blk.text.append(d.text);
    else if (d.type === "thinking_delta") blk.text.append(d.thinking);
    else if (d.type === "input_json_delta" && blk.card) {
      blk.partial = (blk.partial || "") + d.partial_json;
      blk.card.input.textContent = blk.partial;
    }
  }
  scrollDown();
}

function newBlock(v, m, b) {
  if (b.type === "thinking") {
    const d = el("details", "thinking");
    d.append(el("summary", "", "thinking"));
    const text = el("div");
    if (b.thinking) text.textContent = b.thinking;
    d.append(text);
    m.el.append(d);
    return { text };
  }
  if (b.type === "tool_use") {
    const card = toolCard(v, b);
    return { card };
  }
  const text = el("div", "text", b.text || "");
  m.el.append(text);
  return { text };
}

function assistant(v, ev) {
  const m = message(v, (ev.message && ev.message.id) || ev.uuid);
  for (const b of (ev.message && ev.message.content) || []) {
    if (b.type === "tool_use") toolCard(v, b);
    else if (!m.streamed) newBlock(v, m, b);
  }
  if (ev.error) notice(v, `API error: ${ev.error}`, true);
  scrollDown();
}

function toolCard(v, b) {
  let card = v.tools.get(b.id);
  if (!card) {
    const root = el("details", "tool");
    root.open = true;
    const summary = el("summary");
    const name = el("span", "tool-name");
    summary.append(name);
    const body = el("div", "body");
    const input = el("pre", "input");
    const resultPre = el("pre", "result");
    resultPre.hidden = true;
    const atts = el("div", "atts");
    body.append(input, resultPre, atts);
    root.append(summary, body);
    v.log.append(root);
    card = { root, name, input, result: resultPre, atts };
    v.tools.set(b.id, card);
  }
  card.name.textContent = b.mcp ? `${b.mcp.server} · ${b.mcp.tool}` : b.name || "tool";
  if (b.input && Object.keys(b.input).length) card.input.textContent = JSON.stringify(b.input, null, 2);
  return card;
}

function user(v, ev) {
  const content = ev.message && ev.message.content;
  if (typeof content === "string") {
    echoTurn(v, content, []);
    return;
  }
  const texts = [];
  const images = [];
  for (const b of content || []) {
    if (b.type === "tool_result") toolResult(v, b);
    else if (b.type === "text") texts.push(b.text);
    else if (b.type === "image" && b.source && b.source.type === "base64") images.push(`data:${b.source.media_type};base64,${b.source.data}`);
  }
  if (texts.length || images.length) echoTurn(v, texts.join("\n"), images);
  scrollDown();
}

// echoTurn shows a user turn claude echoed (--replay-user-messages): it
// confirms the bubble shown when the turn was sent, or adds one (replay).
function echoTurn(v, text, images) {
  const i = v.pendingTurns.findIndex((p) => p.text === text);
  if (i >= 0) {
    v.pendingTurns[i].bubble.classList.remove("pending");
    v.pendingTurns.splice(i, 1);
    return;
  }
  userBubble(v, text, images);
}

function userBubble(v, text, images) {
  const b = el("div", "msg user", text);
  for (const src of images) {
    const img = el("img");
    img.src = src;
    img.alt = "image sent by the user";
    b.append(img);
  }
  v.log.append(b);
  scrollDown(true);
  return b;
}

function toolResult(v, b) {
  const card = toolCard(v, { id: b.tool_use_id, name: b.mcp ? undefined : "tool", mcp: b.mcp });
  card.result.hidden = false;
  card.result.textContent = typeof b.content === "string" ? b.content : JSON.stringify(b.content);
  card.root.classList.toggle("error", !!b.is_error);
  for (const a of b.attachments || []) {
    const src = a.url || (a.data ? `data:${a.mediaType || "application/octet-stream"};base64,${a.data}` : null);
    if (a.kind === "image" && src) {
      const img = el("img");
      img.src = src;
      img.alt = `${a.mediaType || "image"} from the tool`;
      card.atts.append(img);
    } else {
      card.atts.append(el("div", "att", `[${a.kind} ${a.mediaType || ""} ${a.size} bytes${a.error ? " — " + a.error : ""}]`));
    }
  }
}

function result(v, ev) {
  const parts = [];
  if (ev.subtype === "error_during_execution") parts.push("interrupted");
  else if (ev.subtype && ev.subtype !== "success") parts.push(ev.subtype);
  if (typeof ev.duration_ms === "number") parts.push(`${(ev.duration_ms / 1000).toFixed(1)} s`);
  if (typeof ev.total_cost_usd === "number") parts.push(`$${ev.total_cost_usd.toFixed(4)}`);
  if (typeof ev.num_turns === "number") parts.push(`${ev.num_turns} turn${ev.num_turns === 1 ? "" : "s"}`);
  const line = el("div", "result-line", parts.join(" · "));
  v.log.append(line);
  if (ev.is_error && ev.result) notice(v, ev.result, true);
  if (v.id === current) $("#status-line").textContent = "";
  scrollDown();
}

function notice(v, text, isError) {
  const n = el("div", `notice${isError ? " error" : ""}`, text);
  (v ? v.log : $("#log")).append(n);
  scrollDown();
}

function scrollDown(force) {
  const log = $("#log");
  if (force || log.scrollHeight - log.scrollTop - log.clientHeight < 120) log.scrollTop = log.scrollHeight;
}

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

// renderPast renders one event of a past session: like a live one, except
// history_more (a subagent longer than the page), which becomes a button
// that reads the rest of that subagent into its place.
function renderPast(v, ev) {
  if (ev.type !== "ccproxy" || ev.subtype !== "history_more") return renderEvent(v, ev);
  const box = el("div", "subagent-more");
  const btn = el("button", "more-events", "Show the rest of this subagent");
  btn.type = "button";
  let cursor = ev.cursor;
  btn.onclick = async () => {
    btn.disabled = true;
    try {
      const r = await conn.request("history/read", { id: v.past.id, agent: ev.agent, cursor, limit: 200 });
      const log = v.log;
      v.log = box; // the renderer appends to v.log
      try {
        for (const e of r.events) renderPast(v, e.event);
      } finally {
        v.log = log;
      }
      cursor = r.next;
      if (r.more) box.append(btn);
      else btn.remove();
    } catch (err) {
      notice(v, err.message, true);
    } finally {
      btn.disabled = false;
    }
  };
  box.append(btn);
  v.log.append(box);
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

// ---- MCP status ----

function renderMCP(servers) {
  const box = $("#mcp");
  box.replaceChildren();
  for (const s of servers) {
    const item = el("span", "mcp-server");
    item.dataset.server = s.name;
    const dot = el("span", "dot");
    dot.dataset.status = s.status;
    const count = s.toolCount ?? (s.tools ? s.tools.length : undefined);
    item.title = `${s.name}: ${s.status} · ${s.scope} scope${count !== undefined ? ` · ${count} tools` : ""}${s.error ? `\n${s.error}` : ""}`;
    item.append(dot, el("span", "", s.name));
    if (s.status === "awaiting-approval") {
      for (const [label, type] of [["approve", "mcp/approve"], ["reject", "mcp/reject"]]) {
        const btn = el("button", type.slice(4), label);
        btn.onclick = () => conn.request(type, { name: s.name }).catch((err) => alert(err.message));
        item.append(btn);
      }
    }
    if (capabilities.includes("mcp.live")) {
      // Live in every session (mcp/toggle, mcp/reconnect); the status feed shows the result.
      const live = { failed: ["reconnect", "mcp/reconnect", {}], connected: ["disable", "mcp/toggle", { enabled: false }], disabled: ["enable", "mcp/toggle", { enabled: true }] }[s.status];
      if (live) {
        const [label, type, extra] = live;
        const btn = el("button", label, label);
        btn.onclick = async () => {
          try {
            const r = await conn.request(type, { name: s.name, ...extra });
            const failed = r.sessions.filter((x) => !x.ok);
            if (failed.length) alert(failed.map((x) => `${x.session}: ${x.error.message}`).join("\n"));
          } catch (err) {
            alert(err.message);
          }
        };
        item.append(btn);
      }
    }
    if (capabilities.includes("mcp.manage") && ["local", "project", "user"].includes(s.scope)) {
      // Remove asks for a second click: "remove?" then sends mcp/remove.
      const btn = el("button", "remove", "remove");
      btn.onclick = () => {
        if (btn.dataset.armed !== "true") {
          btn.dataset.armed = "true";
          btn.textContent = `remove ${s.name} from ${s.scope} config?`;
          return;
        }
        conn.request("mcp/remove", { name: s.name, scope: s.scope }).catch((err) => alert(err.message));
      };
      item.append(btn);
    }
    box.append(item);
  }
}

// ---- MCP server form (mcp/test, then mcp/add) ----

// mcpDefinition builds the definition the form describes, as a
// configuration file holds it; the proxy checks it as it checks files.
function mcpDefinition(form) {
  const v = (n) => form.elements[n].value;
  const lines = (n) => v(n).split("\n").map((l) => l.trim()).filter(Boolean);
  const transport = v("transport");
  const pairs = {};
  for (const line of lines("pairs")) {
    const sep = transport === "stdio" ? "=" : ":";
    const i = line.indexOf(sep);
    if (i <= 0) throw new Error(`"${line.slice(0, 40)}…" is not ${transport === "stdio" ? "KEY=value" : "Name: value"}`);
    pairs[line.slice(0, i).trim()] = line.slice(i + 1).trim();
  }
  if (transport === "stdio") return { type: "stdio", command: v("target").trim(), args: lines("args"), env: pairs };
  const def = { type: transport, url: v("target").trim() };
  if (Object.keys(pairs).length) def.headers = pairs;
  return def;
}

function setupMCPForm() {
  const dlg = $("#mcp-form");
  const form = dlg.querySelector("form");
  const out = dlg.querySelector(".mcp-form-result");
  const show = (text, ok) => {
    out.textContent = text;
    out.dataset.ok = String(ok);
  };
  $("#mcp-add").onclick = () => {
    form.reset();
    form.elements.pairs.classList.remove("shown");
    show("", true);
    dlg.showModal();
  };
  form.elements.show.onchange = () => form.elements.pairs.classList.toggle("shown", form.elements.show.checked);
  dlg.querySelector(".cancel").onclick = () => dlg.close();
  dlg.querySelector(".test").onclick = async () => {
    if (!form.reportValidity()) return;
    show("testing…", true);
    try {
      const r = await conn.request("mcp/test", { name: form.elements.name.value, definition: mcpDefinition(form) });
      const res = r.results[0];
      if (res.ok) show(`${res.status} · ${res.toolCount} tools · ${Math.round(res.latencyMs.total)} ms`, true);
      else show(`${res.status}: ${res.error ? `${res.error.code}: ${res.error.message}` : ""}${res.error?.stderrTail ? "\n" + res.error.stderrTail : ""}`, false);
    } catch (err) {
      show(err.message, false);
    }
  };
  form.onsubmit = async (ev) => {
    ev.preventDefault();
    try {
      const e = form.elements;
      await conn.request("mcp/add", { name: e.name.value, scope: e.scope.value, definition: mcpDefinition(form) });
      dlg.close();
    } catch (err) {
      show(err.message, false);
    }
  };
}

// ---- start ----

setupMCPForm();
initPermissions({
  conn,
  notice: (session, text, isError) => notice(view(session), text, isError),
  current: () => current,
  name: (session) => sessionName(view(session), sessions.values()),
});
initLayout();
initNotify();

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
