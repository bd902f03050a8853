package proxy

import (
	"io/fs"
	"net/http"
	"path"
	"strings"

	"github.com/ccproxy/ccproxy/protocol"
)

// uiHandler serves the reference web UI (Options.UI, package webui), with
// headers that keep it from being framed or sniffed and a strict CSP
// (repeated from the page's meta tag). It returns nil when the UI is off
// (Options.UI nil).
func (s *Server) uiHandler() http.Handler {
	if s.opts.UI == nil {
		return nil
	}
	files := http.FileServerFS(s.opts.UI)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			writeHTTPError(w, http.StatusMethodNotAllowed, protocol.CodeBadRequest, "the web UI takes GET")
			return
		}
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' blob: data:; style-src 'self'; script-src 'self'; connect-src 'self' ws: wss:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-cache")
		files.ServeHTTP(w, r)
	})
}

// isUIPath reports whether p is one of the web UI's files (or /), in its
// top directory or below (vendor/…). A directory is not: nothing lists the
// UI's folders. Only called when the UI is on.
func (s *Server) isUIPath(p string) bool {
	if p == "/" {
		return true
	}
	name := strings.TrimPrefix(path.Clean(p), "/")
	if !fs.ValidPath(name) {
		return false
	}
	st, err := fs.Stat(s.opts.UI, name)
	return err == nil && !st.IsDir()
}
