// Package webui is ccproxy's reference web UI: the app in app/ (plain HTML,
// CSS and JavaScript modules with no build step), embedded and returned by
// FS, and its tests — the modules' syntax, the vendored libraries, and the
// browser tests that drive it in chromium against a real `ccproxy serve`.
//
// # What it is
//
// app/ holds index.html, app.js, client.js, dom.js, store.js, the mcp*.js
// modules, render.js — the event renderer shared by live and past
// sessions, which also keeps the CLI's words meant for claude alone (an
// agent started in the background) out of the page —, style.css, and vendor/
// — marked, DOMPurify and highlight.js, pinned and copied from npm by
// scripts/vendor-ui.sh, checked against vendor/VERSIONS by TestVendoredUI.
// The model's text, and the user's, is rendered as sanitized Markdown;
// everything else as text. It speaks the protocol (package protocol, SPEC.md) over /v1/ws,
// authenticated by the cookie that POST /v1/login sets in exchange for a
// one-time code passed in the page's URL fragment (#code=…); opened
// without a valid code or cookie (GET /v1/health answers 401) it explains
// how to get a login link. With the history capability its sidebar lists
// the project's past sessions (history/list, filtered by title in the
// page), shows one through the same renderer as live events
// (history/read), and continues it as a new session (session/create
// {resume}).
//
// # The modules
//
// Besides app.js (connection, sessions): store.js (the app's state in one
// object, changed only through its functions, whose topics re-render what
// shows it), render.js (events, live and past), layout.js (the sidebar
// that folds below 700 px, session names, the login help), permissions.js
// (the permission dialog with Bash's command and a diff for
// Edit/MultiEdit/Write, the mode switches: session/setPermissionMode),
// models.js (the model picker beside it: session/state's models, each
// shown by a short name with the full one in its title, session/setModel), rewind.js ("Rewind to here" on a user message: the
// dry run's files, then session/rewind; render.js drops the messages at the
// ccproxy/rewound event; none under the demo, which cannot rewind), usage.js (the context meter and tokens of
// session/state's usage), notify.js (browser notifications while the page is
// hidden), history-manage.js (the History panel's project picker, and each
// past session's Rename inline, Export download and Delete with an Undo
// toast: history/list all, history/rename, history/export, history/delete,
// history/restore), dom.js (the DOM helpers $ and el, which put text in with
// textContent; every module imports them from there, checked by
// TestUIHelpersFromDom), composer.js (around the message box: images
// pasted, dropped or attached, checked against hello's limits and shown
// as removable thumbnails, sent as session/send images; the "/" menu of
// the session's commands and skills, from the system events render.js
// records; the "@" menu of its files, session/files; the box growing to
// 40% of the window; Esc interrupts a running turn, "?" opens the
// shortcuts), copy.js (the copy buttons of code blocks, messages and tool
// output: navigator.clipboard, else a hidden textarea and execCommand),
// format.js (sizes as people read them), and the MCP part, one module per
// panel: mcp.js
// (the entry: pushes into the store, re-renders on its topics),
// mcp-strip.js (the status strip and its chips), mcp-panel.js (the panel a
// server's chip opens: state and reason, scope and source, a failed
// server's stderr tail from mcp/probe, approve/reject, live toggles, edit
// and remove), mcp-tools.js (tools with their parameters and a call form:
// mcp/tools, mcp/call), mcp-access.js (trust the workspace: mcp/trust;
// sign-in: mcp/login), mcp-form.js (the add/edit form: mcp/test, mcp/add,
// mcp/update; an edit sends masked secrets back as shown, which keeps
// them) and mcp-actions.js (what the strip and the panel share). style.css
// sets every color as a custom property: light, dark under
// prefers-color-scheme, VS Code's --vscode-* variables when present.
//
// # How it is served
//
// FS returns app/ as an fs.FS, read only, with no state, no goroutines and
// no locks. `ccproxy serve` hands it to the proxy as proxy.Options.UI
// (`--no-ui`, and `ccproxy acp`, hand nothing: no web UI and no login
// link); the proxy serves its files at / with a strict CSP and
// Cache-Control: no-cache, and never lists its folders (proxy/ui.go). The
// protocol package and the proxy do not embed it: only the binaries that
// import webui carry it.
//
// # Its tests
//
// TestUIModulesParse (node --check on every module), TestUIHelpersFromDom
// and TestVendoredUI read the files. The browser tests (ui_*_test.go,
// tls_ui_test.go) run Debian's chromium, headless, driven by chromedp,
// against the ccproxy binary built by internal/testkit (demo and replay
// backends, started with testkit.StartServe) and, for states only a live
// proxy reaches, a stub backend speaking the protocol over webui.FS. Each
// item the UI offers is checked in the four views of uiViews (1280 and 400
// px, light and dark), mostly by switching the viewport and the emulated
// color scheme in the same page (browser.view) and repeating the item's
// assertions, which costs far less than a new page or session. They
// take a few minutes: `go test ./webui`. Without chromium (or node) they
// skip, or fail when CI=true.
package webui
