package webui

import (
	"embed"
	"io/fs"
)

//go:embed app
var appFiles embed.FS

// FS returns the web app: the files of app/ at its root (index.html, the
// JavaScript modules, style.css, vendor/). cmd/ccproxy hands it to the
// proxy as proxy.Options.UI; `--no-ui` hands nothing.
func FS() fs.FS {
	sub, err := fs.Sub(appFiles, "app")
	if err != nil {
		panic(err) // the directory is embedded at build time
	}
	return sub
}
