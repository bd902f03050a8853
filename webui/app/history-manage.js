// Managing past sessions in the History panel (capability history.manage):
// the project picker (history/list of this project, of all projects, or of
// one picked from history/list all's projects), rename inline
// (history/rename), delete with an Undo toast (history/delete, then
// history/restore), and export as a download (history/export, Markdown or
// JSONL). app.js owns the list: it asks listData for the request's project
// and decorate for each item's buttons; reload(false) lists again. Every
// text from the proxy goes into the page as text.

import { $, el } from "./dom.js";

let conn = null;
let reload = () => {};
let canManage = () => false;
let renamed = () => {};
let picked = false; // the picker was filled from history/list all
let toastTimer = 0;

// initHistoryManage wires the picker; opts: {conn, reload(more), has(cap),
// renamed(claudeSessionId, title)}.
export function initHistoryManage(opts) {
  ({ conn, reload, renamed } = opts);
  canManage = () => opts.has("history.manage");
  $("#history-project").addEventListener("change", () => reload(false));
}

// listData adds the picker's choice to a history/list request's data.
export function listData(data) {
  const v = $("#history-project").value;
  if (v === "*") data.all = true;
  else if (v) data.project = v;
  return data;
}

// isAll reports whether every project is listed (items then say theirs).
export const isAll = () => $("#history-project").value === "*";

// fillPicker offers the projects that have sessions, once a connection
// (history/list all, one session: only its projects are needed).
export async function fillPicker() {
  if (picked) return;
  try {
    const r = await conn.request("history/list", { all: true, limit: 1 });
    picked = true;
    const sel = $("#history-project");
    const keep = sel.value;
    for (const o of [...sel.options]) if (o.dataset.project) o.remove();
    for (const p of r.projects || []) {
      if (!p.project) continue;
      const o = el("option", "", `${p.project} (${p.sessions})`);
      o.value = p.project;
      o.dataset.project = "true";
      sel.append(o);
    }
    sel.value = keep;
    sel.hidden = false;
  } catch {
    // the picker keeps "this project" and "all projects"
  }
}

// decorate adds the item's project (when listing all) and its buttons:
// rename, export, delete.
export function decorate(li, s) {
  if (isAll() && s.project) li.querySelector(".meta").textContent += ` · ${s.project}`;
  if (!canManage()) return;
  const bar = el("span", "history-actions");
  const button = (cls, label, title, fn) => {
    const b = el("button", cls, label);
    b.type = "button";
    b.title = title;
    b.setAttribute("aria-label", title);
    b.onclick = (e) => {
      e.stopPropagation();
      fn(b);
    };
    bar.append(b);
    return b;
  };
  button("rename", "Rename", "Rename this session", () => startRename(li, s));
  button("export", "Export", "Export this session as a file", (b) => toggleExportMenu(li, s, b));
  button("delete", "Delete", "Delete this session (Undo restores it)", () => remove(li, s));
  li.append(bar);
}

function ref(s) {
  const d = { id: s.id };
  if (s.project) d.project = s.project;
  return d;
}

// ---- rename: the title becomes an input; Enter saves, Escape cancels ----

function startRename(li, s) {
  const title = li.querySelector(".title");
  if (!title || li.querySelector("input.rename-input")) return;
  const input = el("input", "rename-input");
  input.value = s.title || "";
  input.maxLength = 200;
  input.setAttribute("aria-label", "new title");
  input.onclick = (e) => e.stopPropagation();
  const done = () => {
    input.replaceWith(title);
  };
  input.onkeydown = async (e) => {
    e.stopPropagation();
    if (e.key === "Escape") {
      e.preventDefault();
      done();
      return;
    }
    if (e.key !== "Enter") return;
    e.preventDefault();
    try {
      const r = await conn.request("history/rename", { ...ref(s), title: input.value });
      s.title = r.title;
      title.textContent = r.title;
      li.dataset.title = r.title;
      li.title = r.title;
      done();
      const bar = $("#history-bar");
      if (bar.dataset.history === s.id) bar.querySelector(".history-title").textContent = r.title;
      renamed(s.id, r.title);
      toast(r.live ? `Renamed (the running session too)` : `Renamed`);
    } catch (err) {
      input.classList.add("error");
      input.title = err.message;
      toast(`Could not rename: ${err.message}`, null, true);
    }
  };
  input.onblur = () => {
    if (input.isConnected && !input.classList.contains("error")) done();
  };
  title.replaceWith(input);
  input.focus();
  input.select();
}

// ---- export: a small menu of the formats; the reply becomes a download ----

function toggleExportMenu(li, s, b) {
  const open = li.querySelector(".export-menu");
  if (open) {
    open.remove();
    return;
  }
  const menu = el("span", "export-menu");
  menu.setAttribute("role", "menu");
  for (const [format, label] of [["markdown", "Markdown"], ["jsonl", "JSONL"]]) {
    const m = el("button", "", label);
    m.type = "button";
    m.dataset.format = format;
    m.setAttribute("role", "menuitem");
    m.onclick = async (e) => {
      e.stopPropagation();
      menu.remove();
      try {
        const r = await conn.request("history/export", { ...ref(s), format });
        download(r.filename, r.text, format === "jsonl" ? "application/jsonl" : "text/markdown");
        toast(r.truncated ? `Exported ${r.filename} (cut short: too large)` : `Exported ${r.filename}`, null, r.truncated);
      } catch (err) {
        toast(`Could not export: ${err.message}`, null, true);
      }
    };
    menu.append(m);
  }
  b.after(menu);
  menu.querySelector("button").focus();
}

function download(name, text, type) {
  const url = URL.createObjectURL(new Blob([text], { type: `${type};charset=utf-8` }));
  const a = el("a");
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60000);
}

// ---- delete, with Undo ----

async function remove(li, s) {
  try {
    await conn.request("history/delete", ref(s));
  } catch (err) {
    toast(`Could not delete: ${err.message}`, null, true);
    return;
  }
  li.remove();
  toast(`Deleted “${s.title || s.id}”`, {
    label: "Undo",
    run: async () => {
      try {
        await conn.request("history/restore", { id: s.id });
        toast("Restored");
        reload(false);
      } catch (err) {
        toast(`Could not restore: ${err.message}`, null, true);
      }
    },
  });
}

// toast shows a short message at the bottom, with an optional action.
function toast(text, action, isError) {
  let t = $("#toast");
  if (!t) {
    t = el("div", "toast");
    t.id = "toast";
    t.setAttribute("role", "status");
    document.body.append(t);
  }
  t.replaceChildren(el("span", "toast-text", text));
  t.classList.toggle("error", !!isError);
  if (action) {
    const b = el("button", "toast-action", action.label);
    b.type = "button";
    b.onclick = () => {
      t.hidden = true;
      action.run();
    };
    t.append(b);
  }
  t.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => (t.hidden = true), action ? 10000 : 4000);
}
