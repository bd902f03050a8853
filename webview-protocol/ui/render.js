// The renderer of the reference web UI: it turns normalized session events
// (SPEC §7) of a live session (renderEvent) or a past one (renderPast) into
// the conversation's DOM. Everything a tool or the model returns is put into
// the page as text (textContent, createTextNode), never as HTML.
//
// app.js owns the views (newView) and tells the renderer, through
// configure, what it needs of the rest of the page.

const $ = (sel) => document.querySelector(sel);
export const el = (tag, cls, text) => {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
};

// hooks: isCurrent(v) — whether v is the conversation shown; onInfo(v) —
// v.info changed (model, cwd); request(type, data) — a protocol request.
const hooks = { isCurrent: () => false, onInfo: () => {}, request: () => Promise.reject(new Error("not connected")) };

export function configure(h) {
  Object.assign(hooks, h);
}

// ---- events ----

export function renderEvent(v, ev) {
  switch (ev.type) {
    case "system":
      if (ev.subtype === "init") {
        v.info.model = ev.model;
        v.info.cwd = ev.cwd;
        hooks.onInfo(v);
      } else if (ev.subtype === "status") {
        if (hooks.isCurrent(v)) $("#status-line").textContent = ev.status ? `${ev.status}…` : "";
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
export function echoTurn(v, text, images) {
  const i = v.pendingTurns.findIndex((p) => p.text === text);
  if (i >= 0) {
    v.pendingTurns[i].bubble.classList.remove("pending");
    v.pendingTurns.splice(i, 1);
    return;
  }
  userBubble(v, text, images);
}

export function userBubble(v, text, images) {
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
  if (hooks.isCurrent(v)) $("#status-line").textContent = "";
  scrollDown();
}

export function notice(v, text, isError) {
  const n = el("div", `notice${isError ? " error" : ""}`, text);
  (v ? v.log : $("#log")).append(n);
  scrollDown();
}

export function scrollDown(force) {
  const log = $("#log");
  if (force || log.scrollHeight - log.scrollTop - log.clientHeight < 120) log.scrollTop = log.scrollHeight;
}

// renderPast renders one event of a past session: like a live one, except
// history_more (a subagent longer than the page), which becomes a button
// that reads the rest of that subagent into its place.
export function renderPast(v, ev) {
  if (ev.type !== "ccproxy" || ev.subtype !== "history_more") return renderEvent(v, ev);
  const box = el("div", "subagent-more");
  const btn = el("button", "more-events", "Show the rest of this subagent");
  btn.type = "button";
  let cursor = ev.cursor;
  btn.onclick = async () => {
    btn.disabled = true;
    try {
      const r = await hooks.request("history/read", { id: v.past.id, agent: ev.agent, cursor, limit: 200 });
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

