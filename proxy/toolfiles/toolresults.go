package toolfiles

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"mime"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/ccproxy/ccproxy/protocol"
)

// ToolResultsPath serves the files the Claude Code CLI saved in a
// session's tool-results folder (large outputs, MCP images, audio, blobs),
// which tool results mention as "saved to …/tool-results/NAME":
// ToolResultsPath + "<claude session id>/<name>".
const ToolResultsPath = "/v1/tool-results/"

var (
	claudeSessionID = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	toolResultName  = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,200}$`)
)

// ToolResults serves the tool-results folders of the Claude sessions
// under Home (the proxy's HistoryHome; "-": history is off, nothing is
// served).
type ToolResults struct {
	Home       string
	Log        *slog.Logger
	WriteError WriteError
}

// ServeHTTP serves <Home>/.claude/projects/<any project
// folder>/<session>/tool-results/<name>: only a regular file, only there
// (the lookup goes through an os.Root of the projects folder, so no link
// leads out of it), with the headers of /v1/blobs. The path names a Claude
// session id and a plain file name, both checked before anything is read.
func (t ToolResults) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		t.WriteError(w, http.StatusMethodNotAllowed, protocol.CodeBadRequest, "tool results take GET or HEAD")
		return
	}
	id, name, ok := strings.Cut(strings.TrimPrefix(r.URL.Path, ToolResultsPath), "/")
	if !ok || !claudeSessionID.MatchString(id) {
		t.WriteError(w, http.StatusBadRequest, protocol.CodeBadRequest, fmt.Sprintf("%.120q: want %s<claude session id (a lower-case UUID)>/<file name>", r.URL.Path, ToolResultsPath))
		return
	}
	if !toolResultName.MatchString(name) || strings.Contains(name, "..") {
		t.WriteError(w, http.StatusBadRequest, protocol.CodeBadRequest, fmt.Sprintf("file name %.80q: want letters, digits, . _ - (no folder, no ..)", name))
		return
	}
	if t.Home == "-" {
		t.WriteError(w, http.StatusNotFound, protocol.CodeNotFound, "this proxy serves no Claude session files (history is off)")
		return
	}
	f, st, err := openToolResult(filepath.Join(t.Home, ".claude", "projects"), id, name)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			t.Log.Warn("tool result file not served", "session_id", id, "err", err)
		}
		t.WriteError(w, http.StatusNotFound, protocol.CodeNotFound, fmt.Sprintf("no saved tool result %q in Claude session %s", name, id))
		return
	}
	defer f.Close()
	mediaType := mime.TypeByExtension(path.Ext(name))
	if mediaType == "" {
		mediaType = "application/octet-stream"
	}
	setFileHeaders(w.Header(), mediaType, "private, no-cache", fmt.Sprintf("attachment; filename=%q", name))
	http.ServeContent(w, r, "", st.ModTime(), f)
}

// openToolResult opens <projects>/<folder>/<id>/tool-results/<name> for the
// first project folder that has it as a regular file.
func openToolResult(projects, id, name string) (*os.File, fs.FileInfo, error) {
	root, err := os.OpenRoot(projects)
	if err != nil {
		return nil, nil, err
	}
	defer root.Close()
	folders, err := fs.ReadDir(root.FS(), ".")
	if err != nil {
		return nil, nil, err
	}
	for _, d := range folders {
		if !d.IsDir() {
			continue
		}
		f, err := root.Open(path.Join(d.Name(), id, "tool-results", name))
		if err != nil {
			continue
		}
		st, err := f.Stat()
		if err != nil || !st.Mode().IsRegular() {
			f.Close()
			continue
		}
		return f, st, nil
	}
	return nil, nil, fs.ErrNotExist
}
