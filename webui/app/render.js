// The renderer of the reference web UI: it turns normalized session events
// (SPEC §7) of a live session (renderEvent) or a past one (renderPast) into
// the conversation's DOM, the same way for both.
//
// What goes in as text and what as HTML: the model's text blocks, and
// the user's turns, are Markdown, turned into HTML by marked (raw HTML in them is shown as text,
// not interpreted) and then sanitized by DOMPurify into a DOM fragment; code
// blocks are highlighted by highlight.js, which escapes what it highlights.
// Everything else a tool or the model returns (thinking, tool inputs and
// outputs) is put into the page as text (textContent,
// createTextNode), never as HTML. The libraries are vendored (vendor/,
// scripts/vendor-ui.sh). Code blocks, messages and tool outputs get copy
// buttons (copy.js); the system events that name the session's slash
// commands and skills go to the store for the composer's "/" menu.
//
// Tool cards keep their tool's name and show built-in tools their own way:
// Edit/Write/MultiEdit as a diff (the CLI's structuredPatch, or the input
// before the result comes), Bash as the command and its output, TodoWrite
// as a checklist, Task as a box that holds its subagent's events (events
// with parent_tool_use_id). Images are shown inline, audio is playable, and
// files the CLI says it saved under a session's tool-results folder become
// links to /v1/tool-results (shown once the proxy confirms they exist);
// the CLI's lines naming those files are shown without their paths.
//
// Scrolling follows the conversation while the reader is at its bottom
// (also when images or cards grow after they are added) and leaves the
// reader alone once they scroll up.
//
// app.js owns the views (newView) and tells the renderer, through
// configure, how to send a request. Which session is shown, and the
// scrolling's state, are the store's (store.js).

import { $, el, api } from "./dom.js";
import { state, setInfo, setFollow, setCommands } from "./store.js";
import { addCodeCopy, copyButton } from "./copy.js";
import { formatSize } from "./format.js";
import { marked } from "./vendor/marked.esm.js";
import DOMPurify from "./vendor/purify.es.js";
import hljs from "./vendor/highlight/core.min.js";
import bash from "./vendor/highlight/languages/bash.min.js";
import diff from "./vendor/highlight/languages/diff.min.js";
import go from "./vendor/highlight/languages/go.min.js";
import javascript from "./vendor/highlight/languages/javascript.min.js";
import json from "./vendor/highlight/languages/json.min.js";
import markdown from "./vendor/highlight/languages/markdown.min.js";
import python from "./vendor/highlight/languages/python.min.js";
import shell from "./vendor/highlight/languages/shell.min.js";
import sql from "./vendor/highlight/languages/sql.min.js";
import typescript from "./vendor/highlight/languages/typescript.min.js";
import xml from "./vendor/highlight/languages/xml.min.js";
import yaml from "./vendor/highlight/languages/yaml.min.js";


// hooks: request(type, data) — a protocol request.
const hooks = { request: () => Promise.reject(new Error("not connected")) };

// isCurrent reports whether v is the conversation shown.
const isCurrent = (v) => v.id === state.current;

export function configure(h) {
  Object.assign(hooks, h);
}

// ---- Markdown ----

for (const [name, lang] of Object.entries({ bash, diff, go, javascript, json, markdown, python, shell, sql, typescript, xml, yaml })) {
  hljs.registerLanguage(name, lang);
}
hljs.registerAliases(["sh", "zsh", "console"], { languageName: "bash" });
hljs.registerAliases(["js", "jsx", "mjs"], { languageName: "javascript" });
hljs.registerAliases(["ts", "tsx"], { languageName: "typescript" });
hljs.registerAliases(["html", "svg"], { languageName: "xml" });
hljs.registerAliases(["yml"], { languageName: "yaml" });
hljs.registerAliases(["golang"], { languageName: "go" });
hljs.registerAliases(["py"], { languageName: "python" });

// The highlighting themes, light and dark, follow the system's scheme, or
// the theme switch (theme.js, which finds them by data-scheme).
for (const [href, media, scheme] of [["vendor/highlight/github.min.css", "not all and (prefers-color-scheme: dark)", "light"], ["vendor/highlight/github-dark.min.css", "(prefers-color-scheme: dark)", "dark"]]) {
  const link = el("link");
  link.rel = "stylesheet";
  link.href = href;
  link.media = media;
  link.dataset.scheme = scheme;
  document.head.append(link);
}

// Raw HTML in the model's Markdown is shown as the text it is.
const escapeHTML = (s) => s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
marked.use({
  gfm: true,
  renderer: {
    html(token) {
      return escapeHTML(token.text);
    },
  },
});

// Links open in a new tab without giving it this page.
DOMPurify.addHook("afterSanitizeAttributes", (node) => {
  if (node.tagName === "A" && node.hasAttribute("href")) {
    node.setAttribute("target", "_blank");
    node.setAttribute("rel", "noopener noreferrer");
  }
});
const purifyConfig = {
  RETURN_DOM_FRAGMENT: true,
  FORBID_TAGS: ["style", "form", "input", "button", "textarea", "select", "iframe", "object", "embed"],
  FORBID_ATTR: ["style", "class", "id"],
};

// setMarkdown renders the Markdown source into box (sanitized); final
// highlights its code blocks (done once a block is complete, not on every
// streamed delta).
function setMarkdown(box, source, final) {
  box.markdown = source;
  const html = marked.parse(source, { async: false });
  box.replaceChildren(DOMPurify.sanitize(html, purifyConfig));
  if (final) {
    highlight(box);
    addCodeCopy(box);
  }
}

// streamMarkdown adds a streamed delta to box's source at once and renders
// it at most once a frame: a long answer arrives in many small deltas, and
// each render parses the whole text.
function streamMarkdown(box, delta) {
  box.markdown += delta;
  if (box.frame) return;
  box.frame = requestAnimationFrame(() => {
    box.frame = 0;
    setMarkdown(box, box.markdown, false);
    scrollDown();
  });
}

function highlight(box) {
  for (const code of box.querySelectorAll("pre code")) {
    const m = /(?:^|\s)language-([\w+-]+)/.exec(code.getAttribute("data-lang") || "");
    const lang = m && hljs.getLanguage(m[1]) ? m[1] : null;
    if (lang) {
      code.className = `language-${lang}`;
      hljs.highlightElement(code);
    } else {
      code.classList.add("hljs");
    }
  }
}

// DOMPurify drops class attributes (FORBID_ATTR), so the code language is
// carried over in data-lang by the code renderer.
marked.use({
  renderer: {
    code(token) {
      const lang = (token.lang || "").trim().split(/\s+/)[0];
      return `<pre><code data-lang="language-${escapeHTML(lang)}">${escapeHTML(token.text)}\n</code></pre>\n`;
    },
  },
});

// ---- follow the conversation ----

// state.follow.stick: the reader is at the bottom, and the view follows
// what comes. Only the reader unsticks it, by scrolling up from where the
// view was last put (follow.top): the scroll events of the view's own
// moves, which may arrive after more content was added, do not count.
// follow.observed: the log's child the ResizeObserver watches.
const follow = state.follow; // read here, changed through setFollow

function toBottom(log) {
  log.scrollTop = log.scrollHeight;
  setFollow({ top: log.scrollTop });
}

function setupFollow() {
  const log = $("#log");
  if (!log) return;
  log.addEventListener("scroll", () => {
    const top = log.scrollTop;
    if (log.scrollHeight - top - log.clientHeight < 40) setFollow({ stick: true });
    else if (top < follow.top - 1) setFollow({ stick: false });
    setFollow({ top });
  });
  const stay = () => {
    if (follow.stick) toBottom(log);
  };
  const ro = new ResizeObserver(stay);
  ro.observe(log);
  const watch = () => {
    const child = log.firstElementChild;
    if (child === follow.observed) return;
    if (follow.observed) ro.unobserve(follow.observed);
    setFollow({ observed: child });
    if (child) ro.observe(child);
  };
  new MutationObserver(watch).observe(log, { childList: true });
  watch();
  // An image that loads grows its card; ResizeObserver sees the log grow,
  // but a load event is a cheaper, sure signal.
  log.addEventListener("load", stay, true);
}
setupFollow();

// scrollDown keeps the bottom in view while the reader is there; force
// (the reader sent a turn or opened a conversation) brings them back.
export function scrollDown(force) {
  const log = $("#log");
  if (force) setFollow({ stick: true });
  if (follow.stick) toBottom(log);
}

// ---- events ----

// where returns the element an event's content goes into: the Task card
// of its subagent, or the conversation.
function where(v, ev) {
  const parent = ev && ev.parent_tool_use_id;
  const card = parent && v.tools.get(parent);
  return card ? card.nested() : v.log;
}

export function renderEvent(v, ev) {
  switch (ev.type) {
    case "system":
      if (ev.subtype === "init") {
        const info = { model: ev.model, cwd: ev.cwd };
        if (ev.session_id && !v.info.claudeSessionId) info.claudeSessionId = ev.session_id;
        setInfo(v, info);
        commandsOf(v, ev);
      } else if (ev.subtype === "commands_changed") {
        commandsOf(v, ev);
      } else if (ev.subtype === "status") {
        if (isCurrent(v)) $("#status-line").textContent = ev.status ? `${ev.status}…` : "";
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
      if (ev.subtype === "rewound") return rewound(v, ev);
      return notice(v, ev.subtype === "oversized_line" ? `a ${ev.bytes}-byte line from claude was too long to show` : `claude: ${ev.text}`, ev.subtype !== "noise");
  }
}

// commandsOf records the slash commands and skills a system event names:
// commands_changed's with descriptions, or init's names (skills marked).
function commandsOf(v, ev) {
  if (ev.subtype === "init") {
    v.skills = new Set(Array.isArray(ev.skills) ? ev.skills : []);
    for (const c of state.composer.commands.get(v.id) || []) if (v.skills.has(c.name)) c.kind = "skill";
  }
  const kind = (name) => (v.skills && v.skills.has(name) ? "skill" : "command");
  if (ev.subtype === "commands_changed" && Array.isArray(ev.commands)) {
    setCommands(v.id, ev.commands.filter((c) => c && c.name).map((c) => ({ name: c.name, description: c.description || "", hint: c.argumentHint || "", kind: kind(c.name) })), true);
  } else if (Array.isArray(ev.slash_commands)) {
    setCommands(v.id, ev.slash_commands.map((name) => ({ name, kind: kind(name) })), false);
  }
}

// put adds node to message m, before its copy button.
function put(m, node) {
  if (m.copy) m.copy.before(node);
  else m.el.append(node);
}

// withCopy gives message m a copy button (once) that copies its text as
// written (the Markdown source of its text blocks).
function withCopy(m) {
  if (m.copy) return;
  m.copy = copyButton(() => [...m.el.querySelectorAll(":scope > .text.markdown")].map((b) => b.markdown).join("\n\n"), "message");
  m.copy.classList.add("msg-copy");
  m.el.append(m.copy);
}

function message(v, id, ev) {
  let m = v.msgs.get(id);
  if (!m) {
    m = { el: el("div", "msg assistant"), blocks: new Map(), streamed: false };
    v.msgs.set(id, m);
    where(v, ev).append(m.el);
  }
  return m;
}

function streamEvent(v, ev) {
  const e = ev.event || {};
  const key = ev.parent_tool_use_id || "main";
  if (e.type === "message_start") {
    const m = message(v, e.message.id, ev);
    m.streamed = true;
    v.streaming.set(key, e.message.id);
    return;
  }
  const m = v.msgs.get(v.streaming.get(key));
  if (!m) return;
  if (e.type === "content_block_start") {
    const b = e.content_block || {};
    m.blocks.set(e.index, newBlock(v, m, b, ev));
  } else if (e.type === "content_block_delta") {
    const blk = m.blocks.get(e.index);
    const d = e.delta || {};
    if (!blk) return;
    if (d.type === "text_delta" && blk.markdown) streamMarkdown(blk.text, d.text);
    else if (d.type === "text_delta" || d.type === "thinking_delta") blk.text.append(d.text ?? d.thinking);
    else if (d.type === "input_json_delta" && blk.card && !blk.card.input.dataset.special) {
      blk.partial = (blk.partial || "") + d.partial_json;
      blk.card.input.textContent = blk.partial;
      blk.card.input.hidden = blk.partial === "{}";
    }
  } else if (e.type === "content_block_stop") {
    const blk = m.blocks.get(e.index);
    if (blk && blk.markdown) {
      cancelAnimationFrame(blk.text.frame);
      blk.text.frame = 0;
      setMarkdown(blk.text, blk.text.markdown, true);
    }
  }
  scrollDown();
}

function newBlock(v, m, b, ev) {
  if (b.type === "thinking") {
    const d = el("details", "thinking");
    d.append(el("summary", "", "thinking"));
    const text = el("div");
    if (b.thinking) text.textContent = b.thinking;
    d.append(text);
    put(m, d);
    return { text };
  }
  if (b.type === "tool_use") {
    const card = toolCard(v, b, ev);
    return { card };
  }
  const text = el("div", "text markdown");
  setMarkdown(text, b.text || "", !m.streamed);
  put(m, text);
  withCopy(m);
  return { text, markdown: true };
}

function assistant(v, ev) {
  const m = message(v, (ev.message && ev.message.id) || ev.uuid, ev);
  for (const b of (ev.message && ev.message.content) || []) {
    if (b.type === "tool_use") toolCard(v, b, ev);
    else if (!m.streamed) newBlock(v, m, b, ev);
  }
  if (ev.error) {
    // The CLI's own message says what failed ("API Error: 401 …"): shown
    // once, as an error; the turn's result repeats it (result()).
    const said = ((ev.message && ev.message.content) || []).filter((b) => b.type === "text").map((b) => b.text).join("\n");
    m.el.classList.add("error");
    v.apiError = said;
    if (!said.trim()) notice(v, `API error: ${ev.error}`, true);
  }
  scrollDown();
}

// ---- tool cards ----

// toolCard returns the card of tool use b.id, made on first sight; b may be
// a tool_use block (name, input) or a stand-in made from a tool_result (no
// name: a result never renames its card).
function toolCard(v, b, ev) {
  let card = v.tools.get(b.id);
  if (!card) {
    const root = el("details", "tool");
    root.open = true;
    root.dataset.toolUseId = b.id;
    const summary = el("summary");
    const name = el("span", "tool-name", "tool");
    const about = el("span", "tool-about");
    summary.append(name, about);
    const view = el("div", "view");
    const body = el("div", "body");
    const input = el("pre", "input");
    const resultPre = el("pre", "result");
    resultPre.hidden = true;
    const atts = el("div", "atts");
    body.append(view, input, resultPre, atts);
    root.append(summary, body);
    where(v, ev).append(root);
    card = { root, name, about, view, input, result: resultPre, atts, tool: "" };
    card.nested = () => {
      if (!card.sub) {
        card.sub = el("div", "subagent");
        body.insertBefore(card.sub, resultPre);
      }
      return card.sub;
    };
    v.tools.set(b.id, card);
  }
  if (b.mcp) {
    card.name.textContent = `${b.mcp.server} · ${b.mcp.tool}`;
    card.tool = b.name || card.tool;
  } else if (b.name) {
    card.name.textContent = b.name;
    card.tool = b.name;
  }
  if (card.tool) card.root.dataset.tool = card.tool;
  if (b.input && Object.keys(b.input).length) {
    card.toolInput = b.input;
    card.input.textContent = JSON.stringify(b.input, null, 2);
    card.input.hidden = false;
    // What the call is about, in the summary line (Read's file, Grep's
    // pattern, WebFetch's URL, …); the built-in views below may say more.
    const about = ["description", "file_path", "notebook_path", "path", "pattern", "url", "query"].find((k) => typeof b.input[k] === "string");
    if (about && !b.mcp) card.about.textContent = b.input[about];
    const special = builtins[card.tool];
    if (special) {
      card.input.hidden = true;
      card.input.dataset.special = "true";
      special.input(card, b.input);
    }
  } else if (b.input) {
    card.input.hidden = true; // no arguments
  }
  return card;
}

// builtins render the Claude Code tools whose input and result have a
// known shape.
const builtins = {
  Bash: {
    input(card, input) {
      card.about.textContent = input.description || "";
      card.view.replaceChildren(el("pre", "bash-command", input.command || ""));
    },
    result(card, text, extra) {
      const out = el("pre", "bash-output");
      if (extra && typeof extra === "object" && typeof extra.stdout === "string") {
        out.append(extra.stdout);
        if (extra.stderr) out.append(el("span", "stderr", (extra.stdout ? "\n" : "") + extra.stderr));
        if (extra.interrupted) out.append(el("span", "stderr", "\n[interrupted]"));
      } else {
        out.textContent = text;
      }
      if (!out.textContent) out.append(el("span", "muted", "(no output)"));
      card.view.querySelector(".bash-output")?.remove();
      card.view.append(out);
      return true;
    },
  },
  Edit: {
    input(card, input) {
      card.about.textContent = input.file_path || "";
      card.view.replaceChildren(diffView(inputHunks([{ old_string: input.old_string, new_string: input.new_string }])));
    },
    result: patchResult,
  },
  MultiEdit: {
    input(card, input) {
      card.about.textContent = input.file_path || "";
      card.view.replaceChildren(diffView(inputHunks(input.edits || [])));
    },
    result: patchResult,
  },
  Write: {
    input(card, input) {
      card.about.textContent = input.file_path || "";
      card.view.replaceChildren(diffView(inputHunks([{ old_string: "", new_string: input.content }])));
    },
    result: patchResult,
  },
  TodoWrite: {
    input(card, input) {
      const todos = (input.todos || []).map((t) => ({ subject: t.status === "in_progress" && t.activeForm ? t.activeForm : t.content || "", status: t.status }));
      card.about.textContent = `${todos.filter((t) => t.status === "completed").length}/${todos.length} done`;
      card.view.replaceChildren(checklist(todos));
    },
    result: () => true, // the checklist says it all; the text is one click away
  },
  Task: {
    input(card, input) {
      card.about.textContent = [input.subagent_type, input.description].filter(Boolean).join(": ");
      card.root.classList.add("task");
      if (input.prompt) card.view.replaceChildren(el("div", "task-prompt", input.prompt));
      card.nested();
    },
    // An agent started in the background: the CLI's result says so in words
    // meant for claude alone ("This tool result is internal metadata —
    // never quote…", the agent's internal id, its transcript's path). The
    // card says it plainly instead, in live and past sessions alike (the
    // CLI's side copy, tool_use_result, marks it: status async_launched).
    // ccproxy acp applies the same rule for editors (acp/mapper.go,
    // backgroundLaunch).
    result(card, text, extra) {
      if (!extra || (extra.status !== "async_launched" && extra.isAsync !== true)) return false;
      card.result.hidden = false;
      card.result.textContent = "Started in the background.";
      return INTERNAL;
    },
  },
};
builtins.Agent = builtins.Task;

// INTERNAL is what a builtin's result returns when the result's text is
// the CLI's, for claude only: the card shows what the builtin put there.
const INTERNAL = "internal";

// The task tools (TaskCreate, TaskUpdate: what the CLI offers instead of
// TodoWrite by default) change one task at a time; their cards show the
// whole list as it stands after the change, from the CLI's results
// (TaskCreate {task: {id, subject}}, TaskUpdate {taskId, statusChange}).
builtins.TaskCreate = {
  input(card, input) {
    card.about.textContent = input.subject || "";
  },
  result(card, text, extra, v) {
    const t = extra && extra.task;
    if (!t || t.id === undefined) return false;
    taskList(v).set(String(t.id), { subject: t.subject || "", status: "pending" });
    card.view.replaceChildren(checklist([...taskList(v).values()]));
    return true;
  },
};
builtins.TaskUpdate = {
  input(card, input) {
    card.about.textContent = `#${input.taskId ?? "?"}${input.status ? ` → ${input.status}` : ""}`;
  },
  result(card, text, extra, v) {
    if (!extra || !extra.success) return false;
    const list = taskList(v);
    const id = String(extra.taskId);
    const t = list.get(id) || { subject: `#${id}`, status: "pending" };
    if (extra.statusChange && extra.statusChange.to) t.status = extra.statusChange.to;
    if (card.toolInput && card.toolInput.subject) t.subject = card.toolInput.subject;
    if (t.status === "deleted") list.delete(id);
    else list.set(id, t);
    card.view.replaceChildren(checklist([...list.values()]));
    return true;
  },
};

function taskList(v) {
  if (!v.taskList) v.taskList = new Map(); // task id -> {subject, status}
  return v.taskList;
}

// checklist renders tasks ({subject, status: pending | in_progress |
// completed}) as a list of read-only checkboxes.
function checklist(tasks) {
  const ul = el("ul", "todos");
  for (const t of tasks) {
    const li = el("li", "todo");
    li.dataset.status = t.status || "pending";
    const box = el("input");
    box.type = "checkbox";
    box.disabled = true;
    box.checked = t.status === "completed";
    li.append(box, el("span", "", t.subject));
    ul.append(li);
  }
  return ul;
}

// inputHunks makes diff hunks from edits' old and new strings, for a card
// whose result (with the CLI's structuredPatch) has not come yet.
function inputHunks(edits) {
  const lines = (s) => (s ? String(s).replace(/\n$/, "").split("\n") : []);
  return edits.map((e) => ({ lines: [...lines(e.old_string).map((l) => "-" + l), ...lines(e.new_string).map((l) => "+" + l)] }));
}

// patchResult shows the CLI's structuredPatch (Edit, MultiEdit; Write of an
// existing file) or, for a created file, its content as added lines.
function patchResult(card, text, extra) {
  if (!extra || typeof extra !== "object") return false;
  if (Array.isArray(extra.structuredPatch) && extra.structuredPatch.length) {
    card.view.replaceChildren(diffView(extra.structuredPatch));
    return true;
  }
  if (extra.type === "create" && typeof extra.content === "string") {
    const lines = extra.content.replace(/\n$/, "").split("\n").map((l) => "+" + l);
    card.view.replaceChildren(diffView([{ oldStart: 0, oldLines: 0, newStart: 1, newLines: lines.length, lines }]));
    return true;
  }
  return false;
}

// diffView renders hunks ({oldStart, oldLines, newStart, newLines, lines:
// [" ctx", "-old", "+new"]}) as rows with line numbers.
function diffView(hunks) {
  const box = el("div", "diff");
  for (const h of hunks) {
    if (typeof h.oldStart === "number") box.append(el("div", "hunk", `@@ -${h.oldStart},${h.oldLines} +${h.newStart},${h.newLines} @@`));
    let o = h.oldStart || 0;
    let n = h.newStart || 0;
    for (const line of h.lines || []) {
      const sign = line[0];
      const kind = sign === "+" ? "add" : sign === "-" ? "del" : sign === "\\" ? "note" : "ctx";
      const row = el("div", `row ${kind}`);
      const on = kind === "add" || kind === "note" ? "" : o ? String(o++) : "";
      const nn = kind === "del" || kind === "note" ? "" : n ? String(n++) : "";
      row.append(el("span", "ln", on), el("span", "ln", nn), el("span", "sign", kind === "ctx" ? " " : sign), el("span", "code", line.slice(1)));
      box.append(row);
    }
  }
  return box;
}

// ---- user events ----

function user(v, ev) {
  const content = ev.message && ev.message.content;
  if (typeof content === "string") {
    if (!ev.parent_tool_use_id) echoTurn(v, content, [], ev.uuid);
    return;
  }
  const texts = [];
  const images = [];
  for (const b of content || []) {
    if (b.type === "tool_result") toolResult(v, b, ev);
    else if (b.type === "text") texts.push(b.text);
    else if (b.type === "image" && b.source && b.source.type === "base64") images.push(`data:${b.source.media_type};base64,${b.source.data}`);
  }
  // A subagent's prompt is its Task card's input, not a user turn.
  if ((texts.length || images.length) && !ev.parent_tool_use_id) echoTurn(v, texts.join("\n"), images, ev.uuid);
  scrollDown();
}

// echoTurn shows a user turn claude echoed (--replay-user-messages): it
// confirms the bubble shown when the turn was sent, or adds one (replay).
export function echoTurn(v, text, images, uuid) {
  // Not the user's words: the CLI's marker of an interrupt, and the
  // notices it feeds back to claude when a background task ends.
  if (!images.length && /^\[Request interrupted by user[^\]]*\]$/.test(text.trim())) {
    notice(v, "Interrupted");
    return;
  }
  if (!images.length && /^<task-notification>[\s\S]*<\/task-notification>$/.test(text.trim())) {
    const summary = /<summary>([\s\S]*?)<\/summary>/.exec(text);
    notice(v, `Background task: ${summary ? summary[1].trim() : "finished"}`);
    return;
  }
  // The CLI's echo of a command's output, e.g. set_model's "Set model to
  // `haiku (claude-haiku-5-5)`" (session/setModel).
  const cmd = !images.length && /^<local-command-stdout>([\s\S]*)<\/local-command-stdout>$/.exec(text.trim());
  if (cmd) {
    notice(v, cmd[1].replace(/`/g, "").trim());
    return;
  }
  const i = v.pendingTurns.findIndex((p) => p.text === text);
  if (i >= 0) {
    v.pendingTurns[i].bubble.classList.remove("pending");
    rewindable(v, v.pendingTurns[i].bubble, uuid);
    v.pendingTurns.splice(i, 1);
    return;
  }
  rewindable(v, userBubble(v, text, images), uuid);
}

// userBubble shows a user turn: its text rendered as Markdown, as the
// model's is (sanitized the same way), its images, and a copy button.
export function userBubble(v, text, images) {
  const b = el("div", "msg user");
  if (text) {
    const box = el("div", "text markdown");
    setMarkdown(box, text, true);
    // The line break marked ends its HTML with is not the user's.
    while (box.lastChild && box.lastChild.nodeType === Node.TEXT_NODE && !box.lastChild.textContent.trim()) box.lastChild.remove();
    b.append(box);
  }
  for (const src of images) {
    const img = el("img");
    img.src = src;
    img.alt = "image sent by the user";
    b.append(img);
  }
  if (text) {
    const copy = copyButton(() => text, "message");
    copy.classList.add("msg-copy");
    b.append(copy);
  }
  v.log.append(b);
  scrollDown(true);
  return b;
}

function toolResult(v, b, ev) {
  const card = toolCard(v, { id: b.tool_use_id, mcp: b.mcp }, ev);
  let text = typeof b.content === "string" ? b.content : JSON.stringify(b.content);
  card.root.classList.toggle("error", !!b.is_error);
  card.root.dataset.done = "true";
  const special = !b.is_error && builtins[card.tool];
  // The CLI's side copy of the result: one per user event, which holds one
  // tool result.
  const extra = ev.tool_use_result;
  const shown = special && special.result(card, text, extra, v);
  // What the copy button copies: what the card shows as text.
  let copied = text;
  if (shown === INTERNAL) {
    text = ""; // the CLI's words for claude: neither shown nor copied
  } else if (shown) {
    // The view shows the result; the raw text stays one click away.
    const more = el("details", "raw");
    more.append(el("summary", "", "output"), el("pre", "", text));
    card.result.replaceWith(more);
    card.result = more;
  } else {
    // The placeholders of what the card shows itself (the proxy's
    // "[image image/png 3.9 KiB]", the CLI's "[Image: source: <path>]")
    // are not shown as text.
    const visible = plainSavedLines(stripPlaceholders(text, b.attachments || []));
    card.result.hidden = visible === "";
    card.result.textContent = visible;
    copied = visible;
  }
  for (const a of b.attachments || []) attachment(card.atts, a);
  savedFiles(card.atts, text, (b.attachments || []).some((a) => a.kind === "image" && (a.url || a.data)));
  card.output = copied;
  if (!card.copy && copied) {
    card.copy = copyButton(() => card.output, "output");
    card.copy.classList.add("tool-copy");
    card.atts.after(card.copy);
  }
  scrollDown();
}

// A line that is only the placeholder of a part the card shows: the
// proxy's for an attachment (SPEC: "[image image/png 3.9 KiB]") and the
// CLI's for an image it saved ("[Image: source: /…/tool-results/x.png]").
const attPlaceholder = /^\[(image|audio|resource|blob|document) [^\]\n]*\]$/;
const savedImagePlaceholder = /^\[Image: source: [^\]\n]*\]$/;

// The CLI's line for MCP audio or a binary resource it saved in the
// session's tool-results folder ("[Audio from S] Binary content
// (audio/wav, 1.6KB) saved to /…/tool-results/mcp-S-blob-….wav"):
// shown without the path, as "Audio from S: audio/wav, 1.6KB"; the player
// or link comes from savedFiles when the proxy has the file.
const savedBinaryLine = /^\[((?:Audio|Resource) from [^\]\n]*)\] Binary content \(([^)\n]*)\) saved to \S.*$/;

function plainSavedLines(text) {
  return text
    .split("\n")
    .map((line) => {
      const m = savedBinaryLine.exec(line.trim());
      return m ? `${m[1]}: ${m[2]}` : line;
    })
    .join("\n");
}

function stripPlaceholders(text, atts) {
  const shows = new Set(atts.filter((a) => a.url || a.data).map((a) => a.kind));
  if (!shows.size) return text;
  return text
    .split("\n")
    .filter((line) => {
      const l = line.trim();
      const m = attPlaceholder.exec(l);
      if (m && shows.has(m[1])) return false;
      return !(shows.has("image") && savedImagePlaceholder.test(l));
    })
    .join("\n")
    .trim();
}

// enlarge opens an image at its full size in a dialog (click or Escape
// closes it).
function enlarge(img) {
  const d = el("dialog", "lightbox");
  const big = el("img");
  big.src = img.src;
  big.alt = img.alt;
  d.append(big);
  d.addEventListener("click", () => d.close());
  d.addEventListener("close", () => d.remove());
  document.body.append(d);
  d.showModal();
}

// toolImage is an image a tool returned, at its natural size (bounded by
// the card), a click enlarging it.
function toolImage(src, alt) {
  const img = el("img", "tool-image");
  img.src = src;
  img.alt = alt;
  img.tabIndex = 0;
  img.title = "Click to enlarge";
  img.addEventListener("click", () => enlarge(img));
  img.addEventListener("keydown", (e) => {
    if (e.key === "Enter" || e.key === " ") {
      e.preventDefault();
      enlarge(img);
    }
  });
  return img;
}

function attachment(box, a) {
  const src = api(a.url) || (a.data ? `data:${a.mediaType || "application/octet-stream"};base64,${a.data}` : null);
  if (a.kind === "image" && src) {
    box.append(toolImage(src, `${a.mediaType || "image"} from the tool`));
  } else if (a.kind === "audio" && a.url) {
    const audio = el("audio");
    audio.controls = true;
    audio.src = api(a.url);
    box.append(audio);
  } else if (src && !a.error) {
    const link = el("a", "att", `${a.kind} ${a.mediaType || ""} (${a.size} bytes)`);
    link.href = src;
    link.download = a.uri ? a.uri.split("/").pop() : `${a.kind}-${(a.sha256 || "").slice(0, 8)}`;
    box.append(link);
  } else {
    box.append(el("div", "att", `[${a.kind} ${a.mediaType || ""} ${a.size} bytes${a.error ? " — " + a.error : ""}]`));
  }
}

// savedFiles turns the paths of files the CLI saved in a session's
// tool-results folder (…/.claude/projects/<project>/<session>/tool-results/
// <name>) into links served by /v1/tool-results/<session>/<name>, once a
// HEAD says the proxy has the file; audio and images are shown inline.
// (Either separator: the CLI prints native paths.)
const savedPath = /[\\/]\.claude[\\/]projects[\\/][^\\/\s]+[\\/]([0-9a-f-]{36})[\\/]tool-results[\\/]([A-Za-z0-9][A-Za-z0-9._-]*[A-Za-z0-9])/g;

function savedFiles(box, text, hasImage) {
  const seen = new Set();
  for (const m of text.matchAll(savedPath)) {
    // The CLI's copy of an image the result carries (and the card shows):
    // not asked for (no second image, and no 404 where the copy is gone,
    // as in the demo, recorded elsewhere).
    if (hasImage && /\.(png|jpe?g|gif|webp)$/i.test(m[2])) continue;
    const url = api(`/v1/tool-results/${m[1]}/${encodeURIComponent(m[2])}`);
    if (seen.has(url)) continue;
    seen.add(url);
    fetch(url, { method: "HEAD", credentials: "same-origin" })
      .then((r) => {
        if (!r.ok) return;
        const type = r.headers.get("content-type") || "";
        const size = Number(r.headers.get("content-length"));
        const wrap = el("div", "saved");
        if (type.startsWith("audio/")) {
          const audio = el("audio");
          audio.controls = true;
          audio.src = url;
          wrap.append(audio);
        } else if (type.startsWith("image/") && !box.querySelector("img")) {
          // (An image the result carried is shown already: link it only.)
          wrap.append(toolImage(url, m[2]));
        }
        const link = el("a", "att", `${m[2]}${size ? ` (${formatSize(size)})` : ""}`);
        link.href = url;
        link.download = m[2];
        wrap.append(link);
        box.append(wrap);
        scrollDown();
      })
      .catch(() => {});
  }
}

function result(v, ev) {
  const parts = [];
  if (ev.subtype === "error_during_execution") parts.push("interrupted");
  else if (ev.subtype && ev.subtype !== "success") parts.push(ev.subtype);
  if (typeof ev.duration_ms === "number") parts.push(`${(ev.duration_ms / 1000).toFixed(1)} s`);
  if (typeof ev.total_cost_usd === "number") parts.push(`$${ev.total_cost_usd.toFixed(4)}`);
  if (typeof ev.num_turns === "number") parts.push(`${ev.num_turns} turn${ev.num_turns === 1 ? "" : "s"}`);
  if (ev.is_error) parts.unshift("failed");
  const line = el("div", `result-line${ev.is_error ? " error" : ""}`, parts.join(" · "));
  v.log.append(line);
  if (ev.is_error && ev.result && ev.result !== v.apiError) notice(v, ev.result, true);
  v.apiError = undefined;
  if (isCurrent(v)) $("#status-line").textContent = "";
  scrollDown();
}

export function notice(v, text, isError) {
  const n = el("div", `notice${isError ? " error" : ""}`, text);
  (v ? v.log : $("#log")).append(n);
  scrollDown();
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
      box.parentNode.append(box); // the button after what it read
      if (r.more) box.append(btn);
      else btn.remove();
    } catch (err) {
      notice(v, err.message, true);
    } finally {
      btn.disabled = false;
    }
  };
  box.append(btn);
  where(v, ev).append(box);
}

// ---- rewind (rewind.js) ----

// rewindable gives the user message uuid of a live session its "Rewind to
// here" button; none under the demo (app.js's showDemo: a replay cannot
// rewind, SPEC §3).
function rewindable(v, bubble, uuid) {
  if (!uuid || !hooks.rewind || v.state === "history" || v.id.startsWith("history:")) return;
  bubble.dataset.uuid = uuid;
  if (document.body.dataset.demo === "true") return;
  const b = el("button", "rewind-btn"); // its ↶ is CSS: the bubble's text stays the user's
  b.type = "button";
  b.title = "Rewind to here: continue from before this message";
  b.setAttribute("aria-label", "Rewind to here");
  b.onclick = () => hooks.rewind(v, uuid, bubble);
  bubble.append(b);
}

// rewound drops what the view shows from the user message ev.to on: the
// conversation was rewound to just before it (ccproxy/rewound).
function rewound(v, ev) {
  const b = [...v.log.querySelectorAll(".msg.user")].find((x) => x.dataset.uuid === ev.to);
  if (b) {
    while (b.nextSibling) b.nextSibling.remove();
    b.remove();
  }
  const n = (ev.files || []).length;
  notice(v, `Rewound to before a message${n ? `; ${n} file${n === 1 ? "" : "s"} restored` : ""}.`);
}
