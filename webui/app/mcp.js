// The MCP part of the reference web UI: the status strip in the header, the
// panel a server's chip opens (the inspector: state, reason, scope and
// source file, the stderr tail of a failed server, its tools with their
// parameters and a form to call one; approve/reject, trust the workspace,
// enable/disable, reconnect, sign in, edit, remove), and the form that adds
// or edits a server (mcp/test, then mcp/add or mcp/update).
//
// app.js hands it the connection and every push (setupMCP(conn).push(type,
// data)). State: the last mcp/status and mcp/config, and what the open panel
// fetched (tools, probe). Everything a server, a tool or a file returns is
// put into the page as text (textContent), never as HTML.
//
// Editing: the UI only ever sees a definition redacted (secrets as ***).
// The edit form shows it as it is; a value left as shown goes back as
// shown, and mcp/update keeps the stored secret behind it ("keep
// unchanged", SPEC mcp/update). A changed value replaces it.

import { $, el } from "./dom.js";

const button = (cls, label, onclick) => {
  const b = el("button", cls, label);
  b.type = "button";
  if (onclick) b.onclick = onclick;
  return b;
};

let conn = null;
let capabilities = [];
const has = (cap) => capabilities.includes(cap);

let servers = []; // the last mcp/status
const config = new Map(); // name -> entry of the last mcp/config
let project = ""; // the proxy's project directory (mcp/config)
const logins = new Map(); // name -> the last mcp/login state {state, url?, error?}
const WRITABLE = ["local", "project", "user"];

// setupMCP wires the MCP UI to conn and returns what app.js calls: push,
// with every push frame (hello, mcp/status, mcp/config, mcp/login, …).
export function setupMCP(connection) {
  conn = connection;
  setupMCPForm();
  setupPanel();
  return {
    push(type, d) {
      const handler = pushes[type];
      if (handler) handler(d);
    },
  };
}

const pushes = {
  hello(d) {
    capabilities = d.capabilities || [];
    $("#mcp-add").hidden = !has("mcp.manage");
  },
  "mcp/status"(d) {
    servers = d.servers || [];
    renderMCP(servers);
    panel.update();
  },
  "mcp/config"(d) {
    config.clear();
    for (const s of d.servers || []) config.set(s.name, s);
    project = d.project || "";
    renderMCP(servers);
    panel.update();
  },
  // The sign-in started by mcp/login goes on: url (open it), done, failed.
  "mcp/login"(d) {
    logins.set(d.name, d);
    panel.update();
  },
};

// ---- MCP status strip ----

function renderMCP(list) {
  const box = $("#mcp");
  box.replaceChildren();
  for (const s of list) {
    const item = el("span", "mcp-server");
    item.dataset.server = s.name;
    item.tabIndex = 0;
    item.setAttribute("role", "button");
    item.setAttribute("aria-label", `${s.name}: ${s.status}. Open the server's panel`);
    // The chip opens the server's panel; its own buttons act at once.
    item.onclick = (e) => {
      if (!e.target.closest("button")) panel.open(s.name);
    };
    item.onkeydown = (e) => {
      if ((e.key === "Enter" || e.key === " ") && e.target === item) {
        e.preventDefault();
        panel.open(s.name);
      }
    };
    const dot = el("span", "dot");
    dot.dataset.status = s.status;
    const count = s.toolCount ?? (s.tools ? s.tools.length : undefined);
    item.title = `${s.name}: ${s.status} · ${s.scope} scope${count !== undefined ? ` · ${count} tools` : ""}${s.error ? `\n${s.error}` : ""}`;
    item.append(dot, el("span", "", s.name));
    if (s.status === "awaiting-approval") {
      // One approved that waits only for trust: its panel says so and offers trust.
      const waitsForTrust = config.get(s.name)?.needsTrust;
      for (const [label, type] of waitsForTrust ? [["reject", "mcp/reject"]] : [["approve", "mcp/approve"], ["reject", "mcp/reject"]]) {
        const btn = el("button", type.slice(4), label);
        btn.onclick = () => conn.request(type, { name: s.name }).catch((err) => alert(err.message));
        item.append(btn);
      }
    }
    if (has("mcp.live")) {
      // Live in every session (mcp/toggle, mcp/reconnect); the status feed shows the result.
      const live = liveAction(s);
      if (live) {
        const btn = el("button", live.label, live.label);
        btn.onclick = () => live.run().catch((err) => alert(err.message));
        item.append(btn);
      }
    }
    if (has("mcp.manage") && WRITABLE.includes(s.scope)) {
      item.append(removeButton(s, (err) => alert(err.message)));
    }
    box.append(item);
  }
}

// liveAction is the live button of a server (reconnect a failed one,
// disable a connected one, enable a disabled one), or null.
function liveAction(s) {
  const live = { failed: ["reconnect", "mcp/reconnect", {}], connected: ["disable", "mcp/toggle", { enabled: false }], disabled: ["enable", "mcp/toggle", { enabled: true }] }[s.status];
  if (!live) return null;
  const [label, type, extra] = live;
  return {
    label,
    async run() {
      const r = await conn.request(type, { name: s.name, ...extra });
      const failed = r.sessions.filter((x) => !x.ok);
      if (failed.length) throw new Error(failed.map((x) => `${x.session}: ${x.error.message}`).join("\n"));
      return r;
    },
  };
}

// removeButton asks for a second click ("remove NAME from SCOPE config?")
// before it sends mcp/remove.
function removeButton(s, onError) {
  const btn = el("button", "remove", "remove");
  btn.type = "button";
  btn.onclick = () => {
    if (btn.dataset.armed !== "true") {
      btn.dataset.armed = "true";
      btn.textContent = `remove ${s.name} from ${s.scope} config?`;
      return;
    }
    conn.request("mcp/remove", { name: s.name, scope: s.scope }).catch(onError);
  };
  return btn;
}

// ---- the server panel (inspector) ----

const panel = {
  name: null, // the server shown
  probe: null, // the last mcp/probe result of it, or {error}
  probing: false,
  failureProbed: false, // the current failure was probed
  tools: null, // mcp/tools reply, or null (not fetched)
  toolsFor: "", // "connected" once listed while connected, "stale" after it left that state
  message: null, // {text, error} of the last action
  trustAsked: false, // the trust confirmation is shown

  open(name) {
    const dlg = $("#mcp-panel");
    if (this.name !== name) {
      this.name = name;
      this.probe = null;
      this.failureProbed = false;
      this.tools = null;
      this.toolsFor = "";
      this.message = null;
      this.trustAsked = false;
      dlg.querySelector(".mcp-tools-list").replaceChildren();
    }
    dlg.dataset.server = name;
    if (!dlg.open) dlg.showModal();
    this.update();
  },

  close() {
    this.name = null;
    const dlg = $("#mcp-panel");
    delete dlg.dataset.server;
    if (dlg.open) dlg.close();
  },

  status() {
    return servers.find((s) => s.name === this.name);
  },

  say(text, error) {
    this.message = { text, error: !!error };
    this.update();
  },

  // update renders what may change with every push (info, actions,
  // notices, the failure); the tools list is rendered when fetched, so a
  // call being typed survives status updates.
  update() {
    if (!this.name) return;
    const s = this.status();
    const c = config.get(this.name);
    const dlg = $("#mcp-panel");
    dlg.querySelector(".mcp-panel-title").textContent = this.name;
    const st = s ? s.status : c ? (c.active ? "pending" : "inactive") : "removed";
    dlg.dataset.status = st;
    const dot = dlg.querySelector(".mcp-panel-head .dot");
    dot.dataset.status = st;
    dlg.querySelector(".mcp-panel-state").textContent = st;
    renderInfo(dlg.querySelector(".mcp-info"), s, c);
    renderActions(dlg.querySelector(".mcp-actions"), s, c);
    renderNotices(dlg.querySelector(".mcp-notices"), s, c);
    renderFailure(dlg.querySelector(".mcp-failure"), s);
    // A failed server is probed once per failure (the probe has the
    // stderr tail); tools are listed again each time it connects.
    if (!s || s.status !== "failed") this.failureProbed = false;
    else if (!this.failureProbed && !this.probing && has("mcp.probe")) {
      this.failureProbed = true;
      this.probe = null;
      this.runProbe();
    }
    if (!s || s.status !== "connected") this.toolsFor = this.toolsFor && "stale";
    const toolsBox = dlg.querySelector(".mcp-tools");
    toolsBox.hidden = !has("mcp.tools");
    if (has("mcp.tools") && s && s.status === "connected" && this.toolsFor !== "connected") this.loadTools();
    if (has("mcp.tools") && (!s || s.status !== "connected")) {
      dlg.querySelector(".mcp-tools-state").textContent = this.toolsFor === "stale"
        ? "The server is not connected now; the tools below are those it had."
        : "Tools are listed once the server is connected.";
    }
  },

  async runProbe() {
    const name = this.name;
    this.probing = true;
    this.update();
    try {
      const r = await conn.request("mcp/probe", { name });
      const res = r.results[0];
      if (this.name === name) {
        this.probe = res;
        const s = this.status();
        if (!s || s.status !== "failed") {
          this.message = res.ok
            ? { text: `probe: connected · ${res.toolCount} tools · ${Math.round(res.latencyMs.total)} ms`, error: false }
            : { text: `probe: ${res.status}${res.error ? ` — ${res.error.code}: ${res.error.message}` : ""}`, error: true };
        }
      }
    } catch (err) {
      if (this.name === name) this.probe = { error: { code: err.code || "error", message: err.message } };
    } finally {
      this.probing = false;
      if (this.name === name) this.update();
    }
  },

  async loadTools() {
    const name = this.name;
    this.toolsFor = "connected";
    const state = $("#mcp-panel .mcp-tools-state");
    state.textContent = "loading tools…";
    try {
      const r = await conn.request("mcp/tools", { name });
      if (this.name !== name) return;
      this.tools = r;
      state.textContent = r.tools.length ? `${r.tools.length} tool${r.tools.length === 1 ? "" : "s"}` : "This server has no tools.";
      renderTools($("#mcp-panel .mcp-tools-list"), name, r.tools);
    } catch (err) {
      if (this.name !== name) return;
      this.toolsFor = "";
      state.textContent = `Could not list the tools: ${err.message}`;
    }
  },
};

function setupPanel() {
  const dlg = $("#mcp-panel");
  dlg.querySelector(".mcp-panel-close").onclick = () => panel.close();
  // Escape closes the dialog too. The close event is queued: by the time it
  // runs, a click may have opened the panel again (for another server).
  dlg.addEventListener("close", () => {
    if (dlg.open) return;
    panel.name = null;
    delete dlg.dataset.server;
  });
}

// row adds "term: value" to a definition list; value may be a node.
function row(dl, term, value, cls) {
  if (value === undefined || value === null || value === "") return;
  const dt = el("dt", "", term);
  const dd = el("dd", cls);
  if (value instanceof Node) dd.append(value);
  else dd.textContent = String(value);
  dd.dataset.field = term;
  dl.append(dt, dd);
}

function renderInfo(box, s, c) {
  const dl = el("dl");
  const def = (c && c.config) || {};
  row(dl, "status", s ? s.status : c ? "not reported yet" : "no longer configured");
  const reason = (c && c.reason) || (s && s.error) || "";
  row(dl, "reason", reason, "reason");
  row(dl, "scope", (s && s.scope) || (c && c.scope));
  row(dl, "source", c && c.source, "source");
  row(dl, "transport", (c && c.type) || (s && s.transport));
  row(dl, "approval", (c && c.approval) || (s && s.approval));
  if (def.command !== undefined) row(dl, "command", [def.command, ...(def.args || [])].join(" "), "mono");
  if (def.url !== undefined) row(dl, "url", def.url, "mono");
  const env = def.env || def.headers;
  if (env && Object.keys(env).length) row(dl, def.env ? "env" : "headers", Object.entries(env).map(([k, v]) => `${k}${def.env ? "=" : ": "}${v}`).join("\n"), "mono");
  if (c && c.missingEnv && c.missingEnv.length) row(dl, "missing env", c.missingEnv.join(", "));
  if (c && c.shadows && c.shadows.length) row(dl, "overrides", c.shadows.map((o) => `${o.scope}${o.source ? ` (${o.source})` : ""}`).join(", "));
  if (s && s.serverInfo) row(dl, "server", `${s.serverInfo.name || ""} ${s.serverInfo.version || ""}`.trim());
  const count = s && (s.toolCount ?? (s.tools ? s.tools.length : undefined));
  if (count !== undefined) row(dl, "tools", count);
  if (s && s.observedAt) row(dl, "observed", `${new Date(s.observedAt).toLocaleString()}${s.origin ? ` (${s.origin})` : ""}`);
  box.replaceChildren(dl);
}

function renderActions(box, s, c) {
  box.replaceChildren();
  const name = panel.name;
  const fail = (err) => panel.say(err.message, true);
  const act = (cls, label, fn) => {
    const b = button(cls, label, async () => {
      b.disabled = true;
      try {
        await fn();
      } catch (err) {
        fail(err);
      } finally {
        b.disabled = false;
      }
    });
    box.append(b);
    return b;
  };
  if (s && s.status === "awaiting-approval" || c && c.approval === "awaiting") {
    // Approved already (it waits for trust): no second approve.
    if (!(c && c.needsTrust)) act("approve", "Approve", async () => {
      const r = await conn.request("mcp/approve", { name });
      const cur = config.get(name);
      // mcp/config arrived before the reply: needsTrust is current.
      if (r.approval !== "approved" && cur && cur.needsTrust) panel.say("Approval recorded in the project's settings; it counts once the workspace is trusted (below).");
      else panel.say(`approval: ${r.approval}`);
    });
    act("reject", "Reject", async () => panel.say(`approval: ${(await conn.request("mcp/reject", { name })).approval}`));
  }
  // Enable/disable: for the project (mcp/toggle persist, recorded where
  // the CLI records it) when the proxy writes the configuration; else in
  // the live sessions only. Reconnect is live.
  const persisted = c && !c.active && /disabledMcpServers/.test(c.reason || "");
  if (s && has("mcp.manage") && c && (s.status === "connected" || persisted)) {
    const enable = persisted;
    act(enable ? "enable" : "disable", enable ? "Enable for this project" : "Disable for this project", async () => {
      await conn.request("mcp/toggle", { name, enabled: enable, persist: true });
      panel.say(enable ? "Enabled for this project." : "Disabled for this project (disabledMcpServers in ~/.claude.json).");
    });
  }
  if (s && has("mcp.live")) {
    const live = liveAction(s);
    const shown = live && !(has("mcp.manage") && c && (s.status === "connected" || persisted));
    if (shown) act(live.label, `${live.label[0].toUpperCase() + live.label.slice(1)}${live.label === "reconnect" ? "" : " in live sessions"}`, async () => {
      const r = await live.run();
      panel.say(`${live.label}: ${r.sessions.length ? `done in ${r.sessions.length} session${r.sessions.length === 1 ? "" : "s"}` : "no live session"}`);
    });
  }
  const remote = c ? c.type !== "stdio" : s && s.transport && s.transport !== "stdio";
  if (s && s.status === "needs-auth") act("login", "Sign in", () => signIn(name));
  if (remote && s && s.status === "connected" && capabilities.some((x) => /^mcp\.(login|auth|oauth)$/.test(x))) {
    act("logout", "Sign out", async () => {
      await conn.request("mcp/logout", { name });
      panel.say("signed out");
    });
  }
  if (has("mcp.probe")) act("probe", panel.probing ? "Probing…" : "Probe", () => panel.runProbe());
  if (has("mcp.manage") && c && WRITABLE.includes(c.scope) && c.config) {
    act("edit", "Edit…", async () => openForm({ mode: "edit", entry: c }));
    box.append(removeButton(c, fail));
  }
}

function renderNotices(box, s, c) {
  box.replaceChildren();
  if (panel.message) box.append(el("p", `mcp-message${panel.message.error ? " error" : ""}`, panel.message.text));
  const login = logins.get(panel.name);
  if (login) box.append(loginNotice(login));
  if (c && c.needsTrust) box.append(trustNotice());
}

// trustNotice explains why an approved server still waits, and offers to
// trust the workspace (mcp/trust) after a confirmation naming the servers
// that trusting enables.
function trustNotice() {
  const box = el("div", "mcp-trust");
  const where = project || "this project";
  box.append(el("p", "", `This server is approved in the project's settings, but the workspace ${where} is not trusted, so Claude Code ignores those settings and the server stays off.`));
  if (!has("mcp.manage")) {
    box.append(el("p", "", "Open claude in the project once and accept its trust dialog to fix this."));
    return box;
  }
  if (!panel.trustAsked) {
    box.append(button("trust", "Trust this workspace…", () => {
      panel.trustAsked = true;
      panel.update();
    }));
    return box;
  }
  const enables = [...config.values()].filter((x) => x.needsTrust).map((x) => x.name);
  const confirm = el("div", "mcp-trust-confirm");
  confirm.append(el("p", "", `Trust ${where}? It is recorded in ~/.claude.json the way Claude Code's trust dialog records it, so the project's settings files count from now on (their permission rules too), for ccproxy and for claude in a terminal. It enables ${enables.length === 1 ? "this server" : "these servers"}: ${enables.join(", ")}.`));
  const yes = button("trust-confirm", `Trust and enable ${enables.join(", ")}`, async () => {
    yes.disabled = true;
    try {
      const r = await conn.request("mcp/trust", {});
      panel.trustAsked = false;
      panel.say(`Workspace trusted${r.enabled.length ? `; enabled: ${r.enabled.join(", ")}` : ""}.`);
    } catch (err) {
      yes.disabled = false;
      panel.say(err.message, true);
    }
  });
  const no = button("trust-cancel", "Cancel", () => {
    panel.trustAsked = false;
    panel.update();
  });
  confirm.append(yes, no);
  box.append(confirm);
  return box;
}

// signIn starts the server's OAuth sign-in (mcp/login): the proxy answers,
// or pushes, the authorization URL, which opens in a new tab (a link too,
// for when the browser blocks the tab), then done or failed.
async function signIn(name) {
  logins.set(name, { name, state: "starting" });
  panel.update();
  try {
    const r = await conn.request("mcp/login", { name });
    if (r && r.state) logins.set(name, { ...r, name });
    const cur = logins.get(name);
    if (cur.state === "url" && webURL(cur.url)) window.open(cur.url, "_blank", "noopener");
  } catch (err) {
    logins.set(name, { name, state: "failed", error: err.message });
  }
  panel.update();
}

// webURL reports whether u is an http(s) address: a sign-in URL comes from
// the MCP server's OAuth metadata, and no other scheme (javascript:,
// file:, …) is opened or linked.
const webURL = (u) => typeof u === "string" && /^https?:\/\//i.test(u);

function loginNotice(l) {
  const p = el("div", `mcp-login${l.state === "failed" ? " error" : ""}`);
  p.dataset.state = l.state;
  if (l.state === "starting") p.append("Starting the sign-in…");
  else if (l.state === "url") {
    if (!webURL(l.url)) {
      p.append("The sign-in address is not an http(s) address, so it was not opened.");
      return p;
    }
    p.append("Sign in on the page that opened in a new tab; this panel updates when it is done. ");
    const a = el("a", "login-url", "Open the sign-in page");
    a.href = l.url;
    a.target = "_blank";
    a.rel = "noopener noreferrer";
    p.append(a);
  } else if (l.state === "done") p.append("Signed in.");
  else if (l.state === "failed") p.append(`Sign-in failed${l.error ? `: ${typeof l.error === "string" ? l.error : l.error.message}` : ""}`);
  return p;
}

function renderFailure(box, s) {
  const failed = s && s.status === "failed";
  box.hidden = !failed;
  if (!failed) return;
  const pr = panel.probe;
  const out = box.querySelector(".mcp-failure-text");
  const tail = box.querySelector(".stderr");
  if (panel.probing && !pr) {
    out.textContent = "probing the server…";
    tail.hidden = true;
    return;
  }
  if (!pr) {
    out.textContent = s.error || "";
    tail.hidden = true;
    return;
  }
  const e = pr.error || {};
  out.textContent = pr.ok ? "The probe connected; reconnect the server in the sessions." : `${e.code ? e.code + ": " : ""}${e.message || s.error || ""}`;
  tail.hidden = !e.stderrTail;
  tail.textContent = e.stderrTail || "";
}

// ---- tools: parameters and the call form ----

function renderTools(box, server, tools) {
  box.replaceChildren();
  for (const t of tools) {
    const d = el("details", "mcp-tool");
    d.dataset.tool = t.name;
    const sum = el("summary");
    sum.append(el("span", "tool-name", t.name));
    if (t.title && t.title !== t.name) sum.append(el("span", "tool-title", ` — ${t.title}`));
    d.append(sum);
    if (t.description) d.append(el("p", "tool-desc", t.description));
    if (t.parameters && t.parameters.length) d.append(paramTable(t.parameters));
    else d.append(el("p", "tool-noparams", "No parameters."));
    if (has("mcp.call")) d.append(callForm(server, t));
    box.append(d);
  }
}

// paramTable lists the parameter tree, one row per parameter (nested
// ones by their path).
function paramTable(params) {
  const table = el("table", "params");
  const head = el("tr");
  for (const h of ["parameter", "type", "", "description"]) head.append(el("th", "", h));
  table.append(head);
  const walk = (p) => {
    const tr = el("tr");
    tr.dataset.path = p.path;
    const cons = [];
    if (p.enum) cons.push(`one of ${p.enum.map((v) => JSON.stringify(v)).join(", ")}`);
    if (p.minimum !== undefined) cons.push(`≥ ${p.minimum}`);
    if (p.maximum !== undefined) cons.push(`≤ ${p.maximum}`);
    if (p.minLength !== undefined) cons.push(`≥ ${p.minLength} chars`);
    if (p.maxLength !== undefined) cons.push(`≤ ${p.maxLength} chars`);
    if (p.pattern) cons.push(`matches ${p.pattern}`);
    if (p.format) cons.push(p.format);
    if (p.default !== undefined) cons.push(`default ${JSON.stringify(p.default)}`);
    if (p.unsupported) cons.push(`(${p.unsupported})`);
    tr.append(el("td", "mono", p.path), el("td", "", `${p.type}${p.nullable ? " | null" : ""}`), el("td", "req", p.required ? "required" : ""),
      el("td", "", [p.description, cons.join("; ")].filter(Boolean).join(" — ")));
    table.append(tr);
    for (const k of p.properties || []) walk(k);
    if (p.items) walk(p.items);
  };
  params.forEach(walk);
  return table;
}

// callForm is a form with one field per top-level parameter; it checks
// what it can (required, numbers, JSON), sends mcp/call and shows the
// normalized result, or the proxy's validation errors by field.
function callForm(server, tool) {
  const form = el("form", "mcp-call");
  form.noValidate = true;
  const fields = [];
  for (const p of tool.parameters || []) {
    const label = el("label", "field");
    label.dataset.param = p.name;
    label.append(el("span", "label", `${p.name}${p.required ? " *" : ""}`));
    let input;
    if (p.enum && ["string", "number", "integer"].includes(p.type)) {
      input = el("select");
      input.append(new Option(p.required ? "(choose)" : "(unset)", ""));
      for (const v of p.enum) input.append(new Option(String(v), JSON.stringify(v)));
      input.dataset.kind = "json";
    } else if (p.type === "boolean") {
      input = el("select");
      for (const [t, v] of [["(unset)", ""], ["true", "true"], ["false", "false"]]) input.append(new Option(t, v));
      input.dataset.kind = "json";
    } else if (p.type === "number" || p.type === "integer") {
      input = el("input");
      input.type = "number";
      input.step = p.type === "integer" ? "1" : "any";
      if (p.minimum !== undefined) input.min = String(p.minimum);
      if (p.maximum !== undefined) input.max = String(p.maximum);
      input.dataset.kind = p.type;
    } else if (p.type === "string") {
      input = el("input");
      input.dataset.kind = "string";
    } else {
      input = el("textarea");
      input.rows = 2;
      input.placeholder = p.type === "array" ? "JSON array, e.g. []" : p.type === "object" ? "JSON object, e.g. {}" : "JSON value";
      input.dataset.kind = "json";
    }
    input.name = p.name;
    if (p.default !== undefined && input.tagName !== "SELECT") input.placeholder = `default: ${JSON.stringify(p.default)}`;
    const err = el("span", "field-error");
    label.append(input, err);
    form.append(label);
    fields.push({ p, input, err });
  }
  const actions = el("div", "call-actions");
  const run = el("button", "call", `Call ${tool.name}`);
  run.type = "submit";
  actions.append(run);
  const out = el("div", "mcp-call-result");
  out.hidden = true;
  form.append(actions, out);
  form.onsubmit = async (ev) => {
    ev.preventDefault();
    const args = {};
    let bad = false;
    for (const f of fields) {
      f.err.textContent = "";
      const raw = f.input.value;
      if (raw.trim() === "") {
        if (f.p.required) {
          f.err.textContent = "required";
          bad = true;
        }
        continue;
      }
      try {
        args[f.p.name] = fieldValue(f.input.dataset.kind, raw, f.p);
      } catch (e) {
        f.err.textContent = e.message;
        bad = true;
      }
    }
    if (bad) return;
    run.disabled = true;
    out.hidden = false;
    out.dataset.state = "calling";
    out.replaceChildren(el("div", "meta", "calling…"));
    try {
      const r = await conn.request("mcp/call", { name: server, tool: tool.name, arguments: args });
      showResult(out, r);
    } catch (e) {
      out.dataset.state = "error";
      out.replaceChildren(el("div", "meta", `${e.code ? e.code + ": " : ""}${e.message}`));
      for (const f of e.details?.fields || []) {
        const top = String(f.path).split(/[.[]/)[0];
        const field = fields.find((x) => x.p.name === top);
        if (field) field.err.textContent = `${f.message}${f.path !== top ? ` (${f.path})` : ""}`;
        else out.append(el("div", "field-error", `${f.path}: ${f.message}`));
      }
    } finally {
      run.disabled = false;
    }
  };
  return form;
}

// fieldValue turns a field's text into the argument's value.
function fieldValue(kind, raw, p) {
  if (kind === "string") return raw;
  if (kind === "integer" || kind === "number") {
    const n = Number(raw);
    if (!Number.isFinite(n)) throw new Error("not a number");
    if (kind === "integer" && !Number.isInteger(n)) throw new Error("not a whole number");
    if (p.minimum !== undefined && n < p.minimum) throw new Error(`must be ≥ ${p.minimum}`);
    if (p.maximum !== undefined && n > p.maximum) throw new Error(`must be ≤ ${p.maximum}`);
    return n;
  }
  try {
    const v = JSON.parse(raw);
    if (p.type === "array" && !Array.isArray(v)) throw new Error("want a JSON array");
    if (p.type === "object" && (v === null || typeof v !== "object" || Array.isArray(v))) throw new Error("want a JSON object");
    return v;
  } catch (e) {
    throw new Error(e instanceof SyntaxError ? `not valid JSON: ${e.message}` : e.message);
  }
}

// showResult renders an mcp/call reply: the normalized text, attachments
// and structured content, marked when the tool reported an error.
function showResult(out, r) {
  out.dataset.state = r.isError ? "tool-error" : "ok";
  const parts = [el("div", "meta", `${r.isError ? "the tool reported an error" : "result"} · ${Math.round(r.durationMs)} ms`), el("pre", "content", r.content)];
  for (const a of r.attachments || []) {
    const src = a.url || (a.data ? `data:${a.mediaType || "application/octet-stream"};base64,${a.data}` : null);
    if (a.kind === "image" && src) {
      const img = el("img");
      img.src = src;
      img.alt = `${a.mediaType || "image"} from the tool`;
      parts.push(img);
    } else parts.push(el("div", "att", `[${a.kind} ${a.mediaType || ""} ${a.size} bytes${a.error ? " — " + a.error : ""}]`));
  }
  if (r.structuredContent !== undefined) {
    parts.push(el("div", "meta", "structured content"), el("pre", "structured", JSON.stringify(r.structuredContent, null, 2)));
  }
  out.replaceChildren(...parts);
}

// ---- MCP server form (mcp/test, then mcp/add or mcp/update) ----

let formMode = { mode: "add" }; // or {mode: "edit", entry: the mcp/config entry}

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
  if (formMode.mode === "edit") {
    for (const [k, val] of Object.entries(formMode.entry.config || {})) {
      if (!["type", "command", "args", "env", "url", "headers"].includes(k)) def[k] = val;
    }
  }
  return def;
}

// openForm shows the form empty (add) or filled from a server's redacted
// definition (edit; name and scope fixed).
function openForm(mode) {
  const dlg = $("#mcp-form");
  const form = dlg.querySelector("form");
  formMode = mode;
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

function setupMCPForm() {
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
      const editing = formMode.mode === "edit";
      await conn.request(editing ? "mcp/update" : "mcp/add", { name: e.name.value, scope: e.scope.value, definition: mcpDefinition(form) });
      dlg.close();
      if (editing) panel.say("Saved.");
    } catch (err) {
      show(err.message, false);
    }
  };
}
