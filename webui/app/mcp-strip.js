// The MCP status strip in the header: one chip per server of the last
// mcp/status (its state as a colored dot, a title with who set it up, in
// the panel's words, its tools and error), which opens the server's
// panel; its own buttons act at once: approve/reject an awaiting server,
// the live button (reconnect, disable, enable: mcp.live) and remove
// (mcp.manage, writable scopes). mcp.js re-renders it on the store's "mcp"
// topic.

import { $, el } from "./dom.js";
import { state, has } from "./store.js";
import { request, liveAction, removeButton, WRITABLE } from "./mcp-actions.js";
import { panel, scopeWords } from "./mcp-panel.js";

const { config } = state.mcp; // name -> entry of the last mcp/config

// renderMCP renders the strip of servers list (mcp/status's).
export function renderMCP(list) {
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
    item.title = `${s.name}: ${s.status} · set up by ${scopeWords(s.scope)}${count !== undefined ? ` · ${count} tools` : ""}${s.error ? `\n${s.error}` : ""}`;
    item.append(dot, el("span", "", s.name));
    if (s.status === "awaiting-approval") {
      // One approved that waits only for trust: its panel says so and offers trust.
      const waitsForTrust = config.get(s.name)?.needsTrust;
      for (const [label, type] of waitsForTrust ? [["reject", "mcp/reject"]] : [["approve", "mcp/approve"], ["reject", "mcp/reject"]]) {
        const btn = el("button", type.slice(4), label);
        btn.onclick = () => request(type, { name: s.name }).catch((err) => alert(err.message));
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
