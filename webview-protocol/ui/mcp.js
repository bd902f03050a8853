// The MCP part of the reference web UI: the status strip in the header,
// and the form that adds a server (mcp/test, then mcp/add). app.js hands
// it the connection and every push (setupMCP(conn).push(type, data)).
// Everything a server or tool returns is put into the page as text.

const $ = (sel) => document.querySelector(sel);
const el = (tag, cls, text) => {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
};

let conn = null;
let capabilities = [];

// setupMCP wires the MCP UI to conn and returns what app.js calls: push,
// with every push frame (hello, mcp/status, mcp/config, …).
export function setupMCP(connection) {
  conn = connection;
  setupMCPForm();
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
    $("#mcp-add").hidden = !capabilities.includes("mcp.manage");
  },
  "mcp/status"({ servers }) {
    renderMCP(servers);
  },
  "mcp/config"() {},
};

// ---- MCP status ----

function renderMCP(servers) {
  const box = $("#mcp");
  box.replaceChildren();
  for (const s of servers) {
    const item = el("span", "mcp-server");
    item.dataset.server = s.name;
    const dot = el("span", "dot");
    dot.dataset.status = s.status;
    const count = s.toolCount ?? (s.tools ? s.tools.length : undefined);
    item.title = `${s.name}: ${s.status} · ${s.scope} scope${count !== undefined ? ` · ${count} tools` : ""}${s.error ? `\n${s.error}` : ""}`;
    item.append(dot, el("span", "", s.name));
    if (s.status === "awaiting-approval") {
      for (const [label, type] of [["approve", "mcp/approve"], ["reject", "mcp/reject"]]) {
        const btn = el("button", type.slice(4), label);
        btn.onclick = () => conn.request(type, { name: s.name }).catch((err) => alert(err.message));
        item.append(btn);
      }
    }
    if (capabilities.includes("mcp.live")) {
      // Live in every session (mcp/toggle, mcp/reconnect); the status feed shows the result.
      const live = { failed: ["reconnect", "mcp/reconnect", {}], connected: ["disable", "mcp/toggle", { enabled: false }], disabled: ["enable", "mcp/toggle", { enabled: true }] }[s.status];
      if (live) {
        const [label, type, extra] = live;
        const btn = el("button", label, label);
        btn.onclick = async () => {
          try {
            const r = await conn.request(type, { name: s.name, ...extra });
            const failed = r.sessions.filter((x) => !x.ok);
            if (failed.length) alert(failed.map((x) => `${x.session}: ${x.error.message}`).join("\n"));
          } catch (err) {
            alert(err.message);
          }
        };
        item.append(btn);
      }
    }
    if (capabilities.includes("mcp.manage") && ["local", "project", "user"].includes(s.scope)) {
      // Remove asks for a second click: "remove?" then sends mcp/remove.
      const btn = el("button", "remove", "remove");
      btn.onclick = () => {
        if (btn.dataset.armed !== "true") {
          btn.dataset.armed = "true";
          btn.textContent = `remove ${s.name} from ${s.scope} config?`;
          return;
        }
        conn.request("mcp/remove", { name: s.name, scope: s.scope }).catch((err) => alert(err.message));
      };
      item.append(btn);
    }
    box.append(item);
  }
}

// ---- MCP server form (mcp/test, then mcp/add) ----

// mcpDefinition builds the definition the form describes, as a
// configuration file holds it; the proxy checks it as it checks files.
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
  if (transport === "stdio") return { type: "stdio", command: v("target").trim(), args: lines("args"), env: pairs };
  const def = { type: transport, url: v("target").trim() };
  if (Object.keys(pairs).length) def.headers = pairs;
  return def;
}

function setupMCPForm() {
  const dlg = $("#mcp-form");
  const form = dlg.querySelector("form");
  const out = dlg.querySelector(".mcp-form-result");
  const show = (text, ok) => {
    out.textContent = text;
    out.dataset.ok = String(ok);
  };
  $("#mcp-add").onclick = () => {
    form.reset();
    form.elements.pairs.classList.remove("shown");
    show("", true);
    dlg.showModal();
  };
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
      await conn.request("mcp/add", { name: e.name.value, scope: e.scope.value, definition: mcpDefinition(form) });
      dlg.close();
    } catch (err) {
      show(err.message, false);
    }
  };
}
