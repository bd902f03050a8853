// The page's frame: the sidebar that collapses on narrow screens (a phone,
// VS Code's side panel), the names of sessions in the list, and what the
// page says when it is not logged in. No protocol traffic here except the
// one GET /v1/health that tells "not logged in" from "proxy down".

import { $, el, api } from "./dom.js";

// narrow matches style.css's breakpoint: below it the sidebar is an
// overlay that the ☰ button opens and picking something closes.
const narrow = matchMedia("(max-width: 700px)");

export function setSidebar(open) {
  document.body.dataset.sidebar = open ? "open" : "closed";
  $("#sidebar-toggle").setAttribute("aria-expanded", String(open));
}

// initLayout wires the ☰ button. On a narrow screen, choosing a session,
// a past session or creating one closes the sidebar again.
export function initLayout() {
  setSidebar(false);
  $("#sidebar-toggle").addEventListener("click", () => setSidebar(document.body.dataset.sidebar !== "open"));
  $("#sidebar").addEventListener("click", (e) => {
    if (narrow.matches && e.target.closest("li")) setSidebar(false);
  });
  $("#new-session").addEventListener("submit", () => {
    if (narrow.matches) setSidebar(false);
  });
  document.addEventListener("keydown", (e) => {
    if (e.key === "Escape" && narrow.matches && document.body.dataset.sidebar === "open") setSidebar(false);
  });
  // A tap on the chat beside the open overlay closes it, as on any phone.
  $("#chat").addEventListener("pointerdown", () => {
    if (narrow.matches && document.body.dataset.sidebar === "open") setSidebar(false);
  });
}

// promptOf returns the text of a user turn (not a tool result, not a
// replayed control answer) of a session/event, or "".
export function promptOf(ev) {
  if (!ev || ev.type !== "user" || !ev.message) return "";
  const c = ev.message.content;
  if (typeof c === "string") return c;
  if (!Array.isArray(c) || c.some((b) => b.type === "tool_result")) return "";
  return c.filter((b) => b.type === "text").map((b) => b.text).join(" ");
}

// sessionName names a live session in the list so that two of the same
// project differ: its title (a continued past session), else the start of
// its first prompt, else the project folder and its number among the
// page's sessions ("api #2"; the number alone tells them apart).
export function sessionName(v, all) {
  if (v.info.title) return v.info.title;
  const prompt = (v.info.prompt || "").replace(/\s+/g, " ").trim();
  if (prompt) return prompt.length > 48 ? prompt.slice(0, 47) + "…" : prompt;
  const folder = (v.info.cwd && (v.info.cwd.split(/[\\/]/).filter(Boolean).pop() || v.info.cwd)) || "session";
  let n = 0;
  for (const o of all) {
    n++;
    if (o === v) break;
  }
  return `${folder} #${n}`;
}

// authState asks the proxy whether this browser is logged in: "ok",
// "login" (401: no valid cookie) or "unknown" (anything else: the proxy is
// down, or a stand-in without /v1/health).
export async function authState() {
  try {
    const r = await fetch(api("/v1/health"), { credentials: "same-origin", cache: "no-store" });
    if (r.status === 401) return "login";
    return r.ok ? "ok" : "unknown";
  } catch {
    return "unknown";
  }
}

// showLoginHelp explains how to log in: why (a spent or expired link, no
// link at all, or a proxy that restarted) and how to get a new link.
export function showLoginHelp(why, detail) {
  const box = $("#login-error");
  const p = (...parts) => {
    const e = document.createElement("p");
    for (const x of parts) e.append(typeof x === "string" ? document.createTextNode(x) : x);
    return e;
  };
  const code = (text) => {
    const c = document.createElement("code");
    c.textContent = text;
    return c;
  };
  const h = document.createElement("h2");
  box.dataset.why = why;
  if (why === "spent") {
    h.textContent = "This login link was already used or has expired";
    box.replaceChildren(h, p("Each login link works once, and a link made by login-url for 5 minutes."));
  } else if (why === "error") {
    h.textContent = "Could not log in";
    box.replaceChildren(h, p(detail || "The login failed."));
  } else if (why === "restarted") {
    h.textContent = "Logged out";
    box.replaceChildren(h, p("The proxy no longer knows this browser: it was probably restarted. Log in again with a new link."));
  } else {
    h.textContent = "Log in to ccproxy";
    box.replaceChildren(h, p("This page needs a one-time login link. ",
      code("ccproxy serve"), " prints one when it starts (\"Open this one-time link in your browser\", or ", code("loginURL"), " in its first line): open that link instead of the plain address."));
  }
  box.append(
    p("To get a new link, run ", code(`ccproxy login-url --url ${location.origin}`), " where the token is set (", code("$CCPROXY_TOKEN"), " or ", code("--token-file"), "), or ask the proxy directly: ",
      code(`curl -X POST -H "Authorization: Bearer $CCPROXY_TOKEN" ${location.origin}/v1/login/code`), "."));
  box.hidden = false;
  const c = $("#conn");
  c.dataset.state = "closed";
  c.textContent = "not logged in";
  // Nothing can be sent until then: say so where the user would type.
  $("#send").disabled = true;
  $("#composer textarea").placeholder = "Log in first: open a login link (see above)";
  $("#empty").replaceChildren(el("p", "empty-lead", "Not logged in."));
}
