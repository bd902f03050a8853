// What an MCP server may need before it runs, as the server panel offers
// it: trusting the workspace (mcp/trust), when the server is approved in
// the project's settings but the workspace is not trusted; and signing in
// (mcp/login, OAuth), whose progress comes as mcp/login pushes (the store's
// state.mcp.logins). Both change the store; its "panel" topic re-renders
// the panel.

import { el } from "./dom.js";
import { state, has, setLogin, setTrustAsked, patchPanel, panelSay } from "./store.js";
import { request, button } from "./mcp-actions.js";

const ps = state.panel;
const { config, logins } = state.mcp; // name -> entry of the last mcp/config; name -> the last mcp/login state

// trustNotice explains why an approved server still waits, and offers to
// trust the workspace (mcp/trust) after a confirmation naming the servers
// that trusting enables.
export function trustNotice() {
  const box = el("div", "mcp-trust");
  const where = state.mcp.project || "this project";
  box.append(el("p", "", `This server is approved in the project's settings, but the workspace ${where} is not trusted, so Claude Code ignores those settings and the server stays off.`));
  if (!has("mcp.manage")) {
    box.append(el("p", "", "Open claude in the project once and accept its trust dialog to fix this."));
    return box;
  }
  if (!ps.trustAsked) {
    box.append(button("trust", "Trust this workspace…", () => setTrustAsked(true)));
    return box;
  }
  const enables = [...config.values()].filter((x) => x.needsTrust).map((x) => x.name);
  const confirm = el("div", "mcp-trust-confirm");
  confirm.append(el("p", "", `Trust ${where}? It is recorded in ~/.claude.json the way Claude Code's trust dialog records it, so the project's settings files count from now on (their permission rules too), for ccproxy and for claude in a terminal. It enables ${enables.length === 1 ? "this server" : "these servers"}: ${enables.join(", ")}.`));
  const yes = button("trust-confirm", `Trust and enable ${enables.join(", ")}`, async () => {
    yes.disabled = true;
    try {
      const r = await request("mcp/trust", {});
      patchPanel({ trustAsked: false });
      panelSay(`Workspace trusted${r.enabled.length ? `; enabled: ${r.enabled.join(", ")}` : ""}.`);
    } catch (err) {
      yes.disabled = false;
      panelSay(err.message, true);
    }
  });
  const no = button("trust-cancel", "Cancel", () => setTrustAsked(false));
  confirm.append(yes, no);
  box.append(confirm);
  return box;
}

// signIn starts the server's OAuth sign-in (mcp/login): the proxy answers,
// or pushes, the authorization URL, which opens in a new tab (a link too,
// for when the browser blocks the tab), then done or failed.
export async function signIn(name) {
  setLogin(name, { name, state: "starting" });
  try {
    const r = await request("mcp/login", { name });
    if (r && r.state) setLogin(name, { ...r, name });
    const cur = logins.get(name);
    if (cur.state === "url" && webURL(cur.url)) window.open(cur.url, "_blank", "noopener");
  } catch (err) {
    setLogin(name, { name, state: "failed", error: err.message });
  }
}

// webURL reports whether u is an http(s) address: a sign-in URL comes from
// the MCP server's OAuth metadata, and no other scheme (javascript:,
// file:, …) is opened or linked.
const webURL = (u) => typeof u === "string" && /^https?:\/\//i.test(u);

export function loginNotice(l) {
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
