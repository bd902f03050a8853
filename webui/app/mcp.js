// The MCP part of the reference web UI: the status strip in the header
// (mcp-strip.js), the panel a server's chip opens (mcp-panel.js, the
// inspector: state, reason, scope and source file, the stderr tail of a
// failed server, approve/reject, enable/disable, reconnect, sign in, edit,
// remove), its tools with their parameters and a form to call one
// (mcp-tools.js), trusting the workspace and signing in (mcp-access.js),
// and the form that adds or edits a server (mcp-form.js: mcp/test, then
// mcp/add or mcp/update); what the strip and the panel share is in
// mcp-actions.js.
//
// app.js hands it the connection and every push (setupMCP(conn).push(type,
// data)). State, in the store (store.js): the last mcp/status and
// mcp/config (state.mcp; "mcp" re-renders the strip and the panel), what
// the open panel fetched (tools, probe; state.panel, "panel") and the
// form's mode (state.form). Everything a server, a tool or a file returns
// is put into the page as text (textContent), never as HTML.

import { $ } from "./dom.js";
import * as store from "./store.js";
import { setConnection } from "./mcp-actions.js";
import { renderMCP } from "./mcp-strip.js";
import { panel, setupPanel } from "./mcp-panel.js";
import { setupMCPForm } from "./mcp-form.js";

const { state, has } = store;

// setupMCP wires the MCP UI to conn and returns what app.js calls: push,
// with every push frame (mcp/status, mcp/config, mcp/login, …); hello's
// capabilities come through the store.
export function setupMCP(connection) {
  setConnection(connection);
  setupMCPForm();
  setupPanel();
  store.on("capabilities", () => {
    $("#mcp-add").hidden = !has("mcp.manage");
  });
  store.on("mcp", () => {
    renderMCP(state.mcp.servers);
    panel.update();
  });
  store.on("panel", () => panel.update());
  return {
    push(type, d) {
      const handler = pushes[type];
      if (handler) handler(d);
    },
  };
}

const pushes = {
  "mcp/status"(d) {
    store.setMCPStatus(d.servers);
  },
  "mcp/config"(d) {
    store.setMCPConfig(d);
  },
  // The sign-in started by mcp/login goes on: url (open it), done, failed.
  "mcp/login"(d) {
    store.setLogin(d.name, d);
  },
};
