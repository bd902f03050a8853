// The form that adds or edits an MCP server (#mcp-form): Test sends
// mcp/test, Save mcp/add or mcp/update. Its mode is the store's state.form:
// {mode: "add"} or {mode: "edit", entry: the mcp/config entry}.
//
// Editing: the UI only ever sees a definition redacted (secrets as ***).
// The edit form shows it as it is; a value left as shown goes back as
// shown, and mcp/update keeps the stored secret behind it ("keep
// unchanged", SPEC mcp/update). A changed value replaces it.

import { $ } from "./dom.js";
import * as store from "./store.js";
import { request } from "./mcp-actions.js";

const { state } = store;

// mcpDefinition builds the definition the form describes, as a
// configuration file holds it; the proxy checks it as it checks files.
// Editing, the keys the form does not show (timeout, oauth, …) are sent
// back as they were shown.
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
  let def;
  if (transport === "stdio") def = { type: "stdio", command: v("target").trim(), args: lines("args"), env: pairs };
  else {
    def = { type: transport, url: v("target").trim() };
    if (Object.keys(pairs).length) def.headers = pairs;
  }
  if (state.form.mode === "edit") {
    for (const [k, val] of Object.entries(state.form.entry.config || {})) {
      if (!["type", "command", "args", "env", "url", "headers"].includes(k)) def[k] = val;
    }
  }
  return def;
}

// openForm shows the form empty (add) or filled from a server's redacted
// definition (edit; name and scope fixed).
export function openForm(mode) {
  const dlg = $("#mcp-form");
  const form = dlg.querySelector("form");
  store.setFormMode(mode);
  form.reset();
  const e = form.elements;
  e.pairs.classList.remove("shown");
  const out = dlg.querySelector(".mcp-form-result");
  out.textContent = "";
  out.dataset.ok = "true";
  const editing = mode.mode === "edit";
  dlg.dataset.mode = mode.mode;
  dlg.querySelector("h2").textContent = editing ? `Edit ${mode.entry.name}` : "Add an MCP server";
  dlg.querySelector(".mcp-form-hint").hidden = !editing;
  e.name.readOnly = editing;
  e.scope.disabled = editing;
  if (editing) {
    const c = mode.entry.config || {};
    e.name.value = mode.entry.name;
    e.scope.value = mode.entry.scope;
    const type = c.type === "streamable-http" ? "http" : c.type || (c.url ? "http" : "stdio");
    e.transport.value = type;
    e.target.value = type === "stdio" ? c.command || "" : c.url || "";
    e.args.value = (c.args || []).join("\n");
    const pairs = type === "stdio" ? c.env : c.headers;
    e.pairs.value = Object.entries(pairs || {}).map(([k, v]) => `${k}${type === "stdio" ? "=" : ": "}${v}`).join("\n");
  }
  dlg.showModal();
}

export function setupMCPForm() {
  const dlg = $("#mcp-form");
  const form = dlg.querySelector("form");
  const out = dlg.querySelector(".mcp-form-result");
  const show = (text, ok) => {
    out.textContent = text;
    out.dataset.ok = String(ok);
  };
  $("#mcp-add").onclick = () => openForm({ mode: "add" });
  form.elements.show.onchange = () => form.elements.pairs.classList.toggle("shown", form.elements.show.checked);
  dlg.querySelector(".cancel").onclick = () => dlg.close();
  dlg.querySelector(".test").onclick = async () => {
    if (!form.reportValidity()) return;
    show("testing…", true);
    try {
      const r = await request("mcp/test", { name: form.elements.name.value, definition: mcpDefinition(form) });
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
      const editing = state.form.mode === "edit";
      await request(editing ? "mcp/update" : "mcp/add", { name: e.name.value, scope: e.scope.value, definition: mcpDefinition(form) });
      dlg.close();
      if (editing) store.panelSay("Saved.");
    } catch (err) {
      show(err.message, false);
    }
  };
}
