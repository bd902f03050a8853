package proxy

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ccproxy/ccproxy/protocol"
)

// session/files lists the session's own directory (its cwd, not the
// proxy's project) through the feature table; an unknown session is
// unknown_session.
func TestSessionFilesListsTheSessionsDirectory(t *testing.T) {
	t.Parallel()
	ts := startServer(t, Options{})
	cwd := t.TempDir()
	if err := os.WriteFile(filepath.Join(cwd, "only-here.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	c := ts.dial(t)
	s := c.create(map[string]any{"cwd": cwd})
	var r protocol.SessionFilesResult
	mustUnmarshal(t, c.do(protocol.TypeSessionFiles, map[string]any{"session": s, "query": "only"}), &r)
	if len(r.Files) != 1 || r.Files[0].Path != "only-here.txt" || r.Files[0].Dir {
		t.Errorf("files %+v, want only-here.txt", r.Files)
	}
	if e := c.doErr(protocol.TypeSessionFiles, map[string]any{"session": "s-nope"}); e.Code != protocol.CodeUnknownSession {
		t.Errorf("an unknown session: %v", e)
	}
}
