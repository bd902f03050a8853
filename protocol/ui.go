package protocol

import (
	"embed"
	"io/fs"
)

//go:embed ui
var uiFiles embed.FS

// UI returns the reference web UI (index.html, app.js, client.js, dom.js,
// store.js, the mcp*.js modules, render.js — the event renderer shared by
// live and past sessions —, style.css, and vendor/ — marked, DOMPurify and highlight.js, pinned and
// copied from npm by scripts/vendor-ui.sh, checked against vendor/VERSIONS
// by TestVendoredUI): plain HTML, CSS and JavaScript modules with no build
// step, served by `ccproxy serve` at /. The model's text is rendered as
// sanitized Markdown; everything else as text. It speaks this protocol over /v1/ws,
// authenticated by the cookie that POST /v1/login sets in exchange for a
// one-time code passed in the page's URL fragment (#code=…); opened
// without a valid code or cookie (GET /v1/health answers 401) it explains
// how to get a login link. With the history capability its sidebar lists
// the project's past sessions (history/list, filtered by title in the
// page), shows one through the same renderer as live events
// (history/read), and continues it as a new session (session/create
// {resume}). Besides app.js (connection, sessions): store.js (the app's
// state in one object, changed only through its functions, whose topics
// re-render what shows it), render.js (events, live and past), layout.js
// (the sidebar that folds below 700 px, session names, the login help), permissions.js (the permission dialog with
// Bash's command and a diff for Edit/MultiEdit/Write, the mode switches:
// session/setPermissionMode), models.js (the model picker beside it:
// session/state's models, session/setModel), notify.js (browser notifications while the
// page is hidden), dom.js (the DOM helpers $ and el, which put text in
// with textContent; every module imports them from there, checked by
// TestUIHelpersFromDom), and the MCP part, one module per panel: mcp.js
// (the entry: pushes into the store, re-renders on its topics),
// mcp-strip.js (the status strip and its chips), mcp-panel.js (the panel a
// server's chip opens: state and reason, scope and source, a failed
// server's stderr tail from mcp/probe, approve/reject, live toggles, edit
// and remove), mcp-tools.js (tools with their parameters and a call form:
// mcp/tools, mcp/call), mcp-access.js (trust the workspace: mcp/trust;
// sign-in: mcp/login), mcp-form.js (the add/edit form: mcp/test, mcp/add,
// mcp/update; an edit sends masked secrets back as shown, which keeps
// them) and mcp-actions.js (what the strip and the panel share).
// style.css sets every color as a custom property: light, dark under
// prefers-color-scheme, VS Code's --vscode-* variables when present.
func UI() fs.FS {
	sub, err := fs.Sub(uiFiles, "ui")
	if err != nil {
		panic(err) // the directory is embedded at build time
	}
	return sub
}
