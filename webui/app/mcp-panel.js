// The panel a server's chip opens (#mcp-panel, the inspector): its state
// and reason, scope and source file, definition; the stderr tail of a
// failed server (mcp/probe, once per failure); its tools (mcp-tools.js,
// listed each time it connects); and its actions: approve/reject, enable
// or disable for the project or in the live sessions, reconnect, sign in
// and out, probe, edit (mcp-form.js), remove; trust and sign-in notices
// (mcp-access.js). Its state is the store's state.panel; mcp.js calls
// panel.update on the store's "mcp" and "panel" topics. Everything a server
// returns is put into the page as text.

import { $, el } from "./dom.js";
import * as store from "./store.js";
import { request, button, liveAction, removeButton, WRITABLE } from "./mcp-actions.js";
import { trustNotice, signIn, loginNotice } from "./mcp-access.js";
import { renderTools } from "./mcp-tools.js";
import { openForm } from "./mcp-form.js";

const { state, has } = store;
const { config, logins } = state.mcp; // name -> entry of the last mcp/config; name -> the last mcp/login state {state, url?, error?}

// The panel's state is state.panel: name (the server shown), probe (the
// last mcp/probe result of it, or {error}), probing, failureProbed (the
// current failure was probed), tools (mcp/tools reply, or null: not
// fetched), toolsFor ("connected" once listed while connected, "stale"
// after it left that state), message ({text, error} of the last action),
// trustAsked (the trust confirmation is shown).
const ps = state.panel;

export const panel = {
  get name() {
    return ps.name;
  },

  open(name) {
    const dlg = $("#mcp-panel");
    if (ps.name !== name) dlg.querySelector(".mcp-tools-list").replaceChildren();
    dlg.dataset.server = name;
    if (!dlg.open) dlg.showModal();
    store.openPanel(name);
  },

  close() {
    store.closePanel();
    const dlg = $("#mcp-panel");
    delete dlg.dataset.server;
    if (dlg.open) dlg.close();
  },

  status() {
    return state.mcp.servers.find((s) => s.name === ps.name);
  },

  say(text, error) {
    store.panelSay(text, error);
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
    if (!s || s.status !== "failed") store.patchPanel({ failureProbed: false });
    else if (!ps.failureProbed && !ps.probing && has("mcp.probe")) {
      store.patchPanel({ failureProbed: true, probe: null });
      this.runProbe();
    }
    if (!s || s.status !== "connected") store.patchPanel({ toolsFor: ps.toolsFor && "stale" });
    const toolsBox = dlg.querySelector(".mcp-tools");
    toolsBox.hidden = !has("mcp.tools");
    if (has("mcp.tools") && s && s.status === "connected" && ps.toolsFor !== "connected") this.loadTools();
    if (has("mcp.tools") && (!s || s.status !== "connected")) {
      dlg.querySelector(".mcp-tools-state").textContent = ps.toolsFor === "stale"
        ? "The server is not connected now; the tools below are those it had."
        : "Tools are listed once the server is connected.";
    }
  },

  async runProbe() {
    const name = ps.name;
    let result = {};
    store.probeStarted();
    try {
      const r = await request("mcp/probe", { name });
      const res = r.results[0];
      result = { probe: res };
      const s = this.status();
      if (!s || s.status !== "failed") {
        result.message = res.ok
          ? { text: `probe: connected · ${res.toolCount} tools · ${Math.round(res.latencyMs.total)} ms`, error: false }
          : { text: `probe: ${res.status}${res.error ? ` — ${res.error.code}: ${res.error.message}` : ""}`, error: true };
      }
    } catch (err) {
      result = { probe: { error: { code: err.code || "error", message: err.message } } };
    } finally {
      store.probeDone(name, result);
    }
  },

  async loadTools() {
    const name = ps.name;
    store.patchPanel({ toolsFor: "connected" });
    const line = $("#mcp-panel .mcp-tools-state");
    line.textContent = "loading tools…";
    try {
      const r = await request("mcp/tools", { name });
      if (ps.name !== name) return;
      store.patchPanel({ tools: r });
      line.textContent = r.tools.length ? `${r.tools.length} tool${r.tools.length === 1 ? "" : "s"}` : "This server has no tools.";
      renderTools($("#mcp-panel .mcp-tools-list"), name, r.tools);
    } catch (err) {
      if (ps.name !== name) return;
      store.patchPanel({ toolsFor: "" });
      line.textContent = `Could not list the tools: ${err.message}`;
    }
  },
};

export function setupPanel() {
  const dlg = $("#mcp-panel");
  dlg.querySelector(".mcp-panel-close").onclick = () => panel.close();
  // Escape closes the dialog too. The close event is queued: by the time it
  // runs, a click may have opened the panel again (for another server).
  dlg.addEventListener("close", () => {
    if (dlg.open) return;
    store.closePanel();
    delete dlg.dataset.server;
  });
}

// row adds "term: value" to a definition list; value may be a node.
// field (default term) names the row for tests and styles.
function row(dl, term, value, cls, field = term) {
  if (value === undefined || value === null || value === "") return;
  const dt = el("dt", "", term);
  const dd = el("dd", cls);
  if (value instanceof Node) dd.append(value);
  else dd.textContent = String(value);
  dd.dataset.field = field;
  dl.append(dt, dd);
}

// Plain words for the config's terms (the protocol's values stay in each
// row's title).
const SCOPE_WORDS = {
  user: "you (all your projects)",
  local: "you, in this project only",
  project: "the project (.mcp.json, shared)",
  managed: "your organisation (managed)",
  extra: "ccproxy's command line (--mcp-config)",
};
const APPROVAL_WORDS = {
  approved: "approved",
  awaiting: "waiting for your approval",
  rejected: "rejected",
  "not-needed": "not needed (only project servers ask)",
};
const plain = (words, v) => (v ? words[v] || v : v);

// scopeWords says who set a server up (a scope), in the panel's words.
export const scopeWords = (scope) => plain(SCOPE_WORDS, scope);

function renderInfo(box, s, c) {
  const dl = el("dl");
  const def = (c && c.config) || {};
  row(dl, "status", s ? s.status : c ? "not reported yet" : "no longer configured");
  const reason = (c && c.reason) || (s && s.error) || "";
  row(dl, "reason", reason, "reason");
  const scope = (s && s.scope) || (c && c.scope);
  row(dl, "set up by", plain(SCOPE_WORDS, scope), "", "scope");
  row(dl, "source", c && c.source, "source");
  row(dl, "connection", (c && c.type) || (s && s.transport));
  row(dl, "approval", plain(APPROVAL_WORDS, (c && c.approval) || (s && s.approval)));
  if (def.command !== undefined) row(dl, "command", [def.command, ...(def.args || [])].join(" "), "mono");
  if (def.url !== undefined) row(dl, "url", def.url, "mono");
  const env = def.env || def.headers;
  if (env && Object.keys(env).length) row(dl, def.env ? "env" : "headers", Object.entries(env).map(([k, v]) => `${k}${def.env ? "=" : ": "}${v}`).join("\n"), "mono");
  if (c && c.missingEnv && c.missingEnv.length) row(dl, "missing env", c.missingEnv.join(", "));
  if (c && c.shadows && c.shadows.length) row(dl, "overrides", c.shadows.map((o) => `${o.scope}${o.source ? ` (${o.source})` : ""}`).join(", "));
  if (s && s.serverInfo) row(dl, "server", `${s.serverInfo.name || ""} ${s.serverInfo.version || ""}`.trim());
  // The number of tools, said as what it is: the list is below (the
  // Tools section) when the server was asked for it.
  const count = s && (s.toolCount ?? (s.tools ? s.tools.length : undefined));
  if (count !== undefined) row(dl, "tools", has("mcp.tools") ? `${count} (listed under Tools, once it is connected)` : `${count} (this proxy does not list them)`);
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
      const r = await request("mcp/approve", { name });
      const cur = config.get(name);
      // mcp/config arrived before the reply: needsTrust is current.
      if (r.approval !== "approved" && cur && cur.needsTrust) panel.say("Approval recorded in the project's settings; it counts once the workspace is trusted (below).");
      else panel.say(`approval: ${r.approval}`);
    });
    act("reject", "Reject", async () => panel.say(`approval: ${(await request("mcp/reject", { name })).approval}`));
  }
  // Enable/disable: for the project (mcp/toggle persist, recorded where
  // the CLI records it) when the proxy writes the configuration; else in
  // the live sessions only. Reconnect is live.
  const persisted = c && !c.active && /disabledMcpServers/.test(c.reason || "");
  if (s && has("mcp.manage") && c && (s.status === "connected" || persisted)) {
    const enable = persisted;
    act(enable ? "enable" : "disable", enable ? "Enable for this project" : "Disable for this project", async () => {
      await request("mcp/toggle", { name, enabled: enable, persist: true });
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
  if (remote && s && s.status === "connected" && state.capabilities.some((x) => /^mcp\.(login|auth|oauth)$/.test(x))) {
    act("logout", "Sign out", async () => {
      await request("mcp/logout", { name });
      panel.say("signed out");
    });
  }
  if (has("mcp.probe")) act("probe", ps.probing ? "Probing…" : "Probe", () => panel.runProbe());
  if (has("mcp.manage") && c && WRITABLE.includes(c.scope) && c.config) {
    act("edit", "Edit…", async () => openForm({ mode: "edit", entry: c }));
    box.append(removeButton(c, fail));
  }
}

function renderNotices(box, s, c) {
  box.replaceChildren();
  if (ps.message) box.append(el("p", `mcp-message${ps.message.error ? " error" : ""}`, ps.message.text));
  const login = logins.get(panel.name);
  if (login) box.append(loginNotice(login));
  if (c && c.needsTrust) box.append(trustNotice());
}

function renderFailure(box, s) {
  const failed = s && s.status === "failed";
  box.hidden = !failed;
  if (!failed) return;
  const pr = ps.probe;
  const out = box.querySelector(".mcp-failure-text");
  const tail = box.querySelector(".stderr");
  if (ps.probing && !pr) {
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
