// What the MCP strip (mcp-strip.js) and the server panel (mcp-panel.js)
// share: the connection their requests go on (set once by mcp.js), the
// button helper, the scopes the proxy writes, a server's live button
// (mcp/toggle, mcp/reconnect) and the remove button (mcp/remove, after a
// second click).

import { el } from "./dom.js";

const deps = {}; // {conn}: set by setConnection

// setConnection gives the MCP modules the connection to ask on.
export function setConnection(conn) {
  deps.conn = conn;
}

// request sends a protocol request on that connection.
export const request = (type, data) => deps.conn.request(type, data);

export const button = (cls, label, onclick) => {
  const b = el("button", cls, label);
  b.type = "button";
  if (onclick) b.onclick = onclick;
  return b;
};

// WRITABLE are the scopes whose servers the proxy edits and removes.
export const WRITABLE = ["local", "project", "user"];

// liveAction is the live button of a server (reconnect a failed one,
// disable a connected one, enable a disabled one), or null.
export function liveAction(s) {
  const live = { failed: ["reconnect", "mcp/reconnect", {}], connected: ["disable", "mcp/toggle", { enabled: false }], disabled: ["enable", "mcp/toggle", { enabled: true }] }[s.status];
  if (!live) return null;
  const [label, type, extra] = live;
  return {
    label,
    async run() {
      const r = await request(type, { name: s.name, ...extra });
      const failed = r.sessions.filter((x) => !x.ok);
      if (failed.length) throw new Error(failed.map((x) => `${x.session}: ${x.error.message}`).join("\n"));
      return r;
    },
  };
}

// removeButton asks for a second click ("remove NAME from SCOPE config?")
// before it sends mcp/remove.
export function removeButton(s, onError) {
  const btn = el("button", "remove", "remove");
  btn.type = "button";
  btn.onclick = () => {
    if (btn.dataset.armed !== "true") {
      btn.dataset.armed = "true";
      btn.textContent = `remove ${s.name} from ${s.scope} config?`;
      return;
    }
    request("mcp/remove", { name: s.name, scope: s.scope }).catch(onError);
  };
  return btn;
}
