package protocol

import (
	"embed"
	"io/fs"
)

//go:embed ui
var uiFiles embed.FS

// UI returns the reference web UI (index.html, app.js, client.js,
// style.css): plain HTML, CSS and JavaScript modules with no build step,
// served by `ccproxy serve` at /. It speaks this protocol over /v1/ws,
// authenticated by the cookie that POST /v1/login sets in exchange for a
// one-time code passed in the page's URL fragment (#code=…); opened
// without a valid code or cookie (GET /v1/health answers 401) it explains
// how to get a login link. With the history capability its sidebar lists
// the project's past sessions (history/list, filtered by title in the
// page), shows one through the same renderer as live events
// (history/read), and continues it as a new session (session/create
// {resume}). Besides app.js (connection, sessions, rendering): layout.js
// (the sidebar that folds below 700 px, session names, the login help),
// permissions.js (the permission dialog with Bash's command and a diff for
// Edit/MultiEdit/Write, the mode switches: session/setPermissionMode),
// notify.js (browser notifications while the page is hidden). style.css
// sets every color as a custom property: light, dark under
// prefers-color-scheme, VS Code's --vscode-* variables when present.
func UI() fs.FS {
	sub, err := fs.Sub(uiFiles, "ui")
	if err != nil {
		panic(err) // the directory is embedded at build time
	}
	return sub
}
