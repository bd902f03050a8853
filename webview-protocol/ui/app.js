// The reference web UI of ccproxy. Everything a tool or the model returns is
// put into the page as text (textContent, createTextNode), never as HTML.

import { Connection, login } from "./client.js";
import { setupMCP } from "./mcp.js";

const $ = (sel) => document.querySelector(sel);
const el = (tag, cls, text) => {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
};

const sessions = new Map(); // id -> view
let current = null;
const permissions = []; // pending permission/request data, in arrival order
let shownPermission = null;

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
  },
  "session/state"({ session, state, claudeSessionId }) {
    const v = view(session);
    if (claudeSessionId) v.info.claudeSessionId = claudeSessionId;
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
    if (!permissions.some((p) => p.session === d.session && p.requestId === d.requestId)) permissions.push(d);
    showPermission();
  },
  "permission/resolved"({ session, requestId, behavior, reason }) {
    const i = permissions.findIndex((p) => p.session === session && p.requestId === requestId);
    if (i >= 0) permissions.splice(i, 1);
    if (shownPermission && shownPermission.session === session && shownPermission.requestId === requestId) {
      shownPermission = null;
      $("#permission").close();
    }
    notice(view(session), `permission ${behavior}${reason && reason !== "answered" ? ` (${reason})` : ""}`);
    showPermission();
  },
};

// ---- sessions ----

function updateSession(id, state, info) {
  const v = view(id);
  if (state) v.state = state;
  if (info) Object.assign(v.info, info);
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
    const name = v.info.title || (v.info.cwd ? v.info.cwd.split("/").pop() || v.info.cwd : v.id);
    li.append(el("span", "name", name), el("span", "state", v.state));
    li.title = `${v.info.cwd || ""} ${v.info.model || ""}`.trim();
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
  $("#send").disabled = !live;
  $("#interrupt").disabled = !(v && v.state === "running");
}

$("#new-session").addEventListener("submit", async (e) => {
  e.preventDefault();
  const f = e.target;
  const data = {};
  if (f.cwd.value.trim()) data.cwd = f.cwd.value.trim();
  if (f.model.value.trim()) data.model = f.model.value.trim();
  try {
    const r = await conn.request("session/create", data);
    updateSession(r.session, r.state || "starting", { cwd: r.cwd || data.cwd, model: data.model });
    select(r.session);
  } catch (err) {
    alert(`Could not create the session: ${err.message}`);
  }
});

$("#composer").addEventListener("submit", async (e) => {
  e.preventDefault();
  const ta = e.target.text;
  const text = ta.value;
  if (!current || !text.trim()) return;
  const v = view(current);
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
  if (e.key === "Enter" && !e.shiftKey) {
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

// ---- permissions ----

function showPermission() {
  if (shownPermission || !permissions.length) return;
  const p = permissions[0];
  shownPermission = p;
  const dlg = $("#permission");
  // kind: tool (allow, always allow, deny), question (AskUserQuestion:
  // pick options, answer), plan (ExitPlanMode: approve, keep planning).
  const kind = p.kind || "tool";
  const questions = kind === "question" ? p.questions || [] : [];
  dlg.querySelector(".perm-title").textContent = { question: "Answer", plan: "Approve the plan of" }[kind] || "Allow";
  dlg.querySelector(".perm-tool").textContent = p.mcp ? `${p.mcp.server} · ${p.mcp.tool}` : p.displayName || p.toolName;
  dlg.querySelector(".perm-session").textContent = `session ${p.session}`;
  const box = dlg.querySelector(".perm-questions");
  box.replaceChildren();
  questions.forEach((q, i) => {
    const fs = el("fieldset", "perm-question");
    fs.append(el("legend", "", q.header ? `${q.header}: ${q.question}` : q.question));
    for (const o of q.options) {
      const label = el("label");
      const input = el("input");
      input.type = q.multiSelect ? "checkbox" : "radio";
      input.name = `q${i}`;
      input.value = o.label;
      label.append(input, el("span", "", ` ${o.label}`));
      if (o.description) label.append(el("small", "", ` — ${o.description}`));
      fs.append(label);
    }
    box.append(fs);
  });
  const pre = dlg.querySelector(".perm-input");
  pre.hidden = kind === "question";
  pre.textContent = kind === "plan" && p.plan ? p.plan : JSON.stringify(p.input, null, 2);
  dlg.querySelector(".always").hidden = kind !== "tool";
  dlg.querySelector(".allow").textContent = { question: "Answer", plan: "Approve" }[kind] || "Allow";
  dlg.querySelector(".deny").textContent = kind === "plan" ? "Keep planning" : "Deny";
  dlg.returnValue = "";
  dlg.onclose = async () => {
    if (shownPermission !== p) return;
    shownPermission = null;
    const rv = dlg.returnValue;
    const data = { session: p.session, requestId: p.requestId, behavior: rv === "allow" || rv === "always" ? "allow" : "deny" };
    if (rv === "always") data.always = true;
    if (data.behavior === "allow" && kind === "question") {
      // The CLI's format: question text -> chosen label(s).
      data.answers = {};
      questions.forEach((q, i) => {
        const picked = [...box.querySelectorAll(`input[name="q${i}"]:checked`)].map((x) => x.value);
        if (picked.length) data.answers[q.question] = picked.join(", ");
      });
    }
    try {
      await conn.request("permission/respond", data);
    } catch (err) {
      if (err.code !== "already_resolved") notice(view(p.session), err.message, true);
    }
  };
  dlg.showModal();
}

// ---- start ----

login()
  .then(() => conn.connect())
  .catch((err) => {
    const box = $("#login-error");
    box.hidden = false;
    box.textContent = `${err.message}. Open the login link ccproxy printed again.`;
  });
