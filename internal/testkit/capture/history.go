package capture

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/ccproxy/ccproxy/internal/testkit/fakeapi"

	"github.com/ccproxy/ccproxy/internal/claudedirs"
)

// HistoryHome is what the temp directory of a history capture is renamed to
// in the files kept: HOME becomes HistoryHome+"/home" and the project
// HistoryHome+"/project", in paths and in the CLI's mangled folder names.
const HistoryHome = "/tmp/cchist"

// History is what CaptureHistory kept.
type History struct {
	Version   string // the CLI's version, e.g. "2.1.330"
	Dir       string // <dest>/<Version>
	SessionID string // the session of the first run
	ResumeID  string // the session the resumed run wrote to (may equal SessionID)
	Runs      []*Result
}

// historyTools are the tools the history scenarios may use without a prompt.
var historyTools = []string{"mcp__everything", "mcp__testmcp", "Bash", "Edit", "Write", "Read", "Task"}

// HistorySession is a four-turn session made to leave a varied session file:
// text with thinking; Write, Edit and Bash (one with a large output); MCP
// image and echo; a Task subagent that calls an MCP tool and Bash itself.
// The file tools write into the project directory, learnt in Setup.
func HistorySession() Scenario {
	var mu sync.Mutex
	var proj string
	file := func() string {
		mu.Lock()
		defer mu.Unlock()
		return filepath.Join(proj, "notes.txt")
	}
	files := func(req *fakeapi.Request) *fakeapi.Reply {
		if !req.HasTools() || !strings.Contains(req.Prompt(), "[H-FILES]") {
			return nil
		}
		switch req.Step() {
		case 0:
			return fakeapi.CallTool("Write", map[string]any{"file_path": file(), "content": "alpha\nbeta\ngamma\n"})
		case 1:
			return fakeapi.CallTool("Edit", map[string]any{"file_path": file(), "old_string": "beta", "new_string": "BETA (edited)"})
		case 2:
			return fakeapi.CallTool("Bash", map[string]any{"command": "cat notes.txt", "description": "Show the file"})
		case 3:
			return fakeapi.CallTool("Bash", map[string]any{"command": "seq 1 10000", "description": "A large output"})
		}
		return nil
	}
	return Scenario{
		Name:         "history-session",
		About:        "a session file with text, thinking, Write/Edit/Bash, a large Bash output, MCP image + echo, and a Task subagent",
		AllowedTools: historyTools,
		Setup: func(_, p string) error {
			mu.Lock()
			proj = p
			mu.Unlock()
			return nil
		},
		Turns: []string{
			"[H-TEXT] Say hello, after some thought.",
			"[H-FILES] Write a file, edit it, show it, then print a lot.",
			"[H-MCP] Fetch the tiny image and echo something.",
			"[H-TASK] Delegate some work to a subagent.",
		},
		Script: fakeapi.First(
			fakeapi.OnText("[H-TEXT]", &fakeapi.Reply{Blocks: []fakeapi.Block{
				fakeapi.Thinking("The user wants a greeting. A short one will do."),
				fakeapi.Text("Hello! This is the **first** answer."),
			}}),
			files,
			fakeapi.OnText("[H-MCP]", fakeapi.CallTools(
				fakeapi.ToolUse(everything("get-tiny-image"), nil),
				fakeapi.ToolUse(everything("echo"), map[string]any{"message": "hello history"}),
			)),
			// The subagent's own prompt: checked before the main turn.
			fakeapi.OnText("[H-SUB]",
				fakeapi.CallTool(everything("echo"), map[string]any{"message": "from the subagent"}),
				fakeapi.CallTool("Bash", map[string]any{"command": "echo subagent bash", "description": "Say hi"}),
			),
			fakeapi.OnText("[H-TASK]", fakeapi.CallTool("Task", map[string]any{
				"description":   "Echo via MCP",
				"prompt":        "[H-SUB] Echo something through MCP, then run a command.",
				"subagent_type": "general-purpose",
			})),
			fakeapi.OnToolResults(fakeapi.Summarize),
		),
	}
}

// HistoryResume continues session id (whose project folder src is copied
// into the new HOME first, under the new project's mangled name) for one
// more turn with a Bash call.
func HistoryResume(id, src string) Scenario {
	return Scenario{
		Name:         "history-resume",
		About:        "the history session resumed with --resume for one more turn",
		AllowedTools: historyTools,
		Args:         []string{"--resume", id},
		Setup: func(home, proj string) error {
			return copyTree(src, filepath.Join(home, ".claude", "projects", claudedirs.ProjectFolder(proj)), nil)
		},
		Turns: []string{"[H-RESUME] Carry on where we left off."},
		Script: fakeapi.First(
			// A fresh fake numbers its tool uses from 1 again: this id
			// keeps the ids of the session file unique.
			fakeapi.OnText("[H-RESUME]", &fakeapi.Reply{Blocks: []fakeapi.Block{{Type: "tool_use", ID: "toolu_fake_resumed_1",
				Name: "Bash", Input: map[string]any{"command": "echo resumed", "description": "Resume"}}}}),
			fakeapi.OnToolResults(fakeapi.Summarize),
		),
	}
}

// CaptureHistory runs HistorySession and then HistoryResume with the CLI of
// cfg, and keeps what they left in ~/.claude/projects under
// <dest>/<version>/projects, the two stdout transcripts under
// <dest>/<version>/stream, and a listing of the rest of ~/.claude in
// <dest>/<version>/home-tree.txt — with the temp directory's path (and its
// mangled form) replaced by HistoryHome everywhere. cfg.OutDir and
// cfg.KeepTemp are set here.
func CaptureHistory(ctx context.Context, cfg Config, dest string) (*History, error) {
	out, err := exec.CommandContext(ctx, cfg.Claude, "--version").Output()
	if err != nil {
		return nil, fmt.Errorf("capture history: %s --version: %w", cfg.Claude, err)
	}
	fields := strings.Fields(string(out))
	if len(fields) == 0 {
		return nil, fmt.Errorf("capture history: %s --version printed nothing", cfg.Claude)
	}
	h := &History{Version: fields[0], Dir: filepath.Join(dest, fields[0])}
	if err := os.RemoveAll(h.Dir); err != nil {
		return nil, err
	}
	streamDir := filepath.Join(h.Dir, "stream")
	cfg.OutDir, cfg.KeepTemp = streamDir, true
	var temps []string
	defer func() {
		for _, t := range temps {
			os.RemoveAll(t)
		}
	}()
	run := func(sc Scenario) (*Result, error) {
		res, err := Run(ctx, cfg, sc)
		if res != nil {
			temps = append(temps, res.TempDir)
			h.Runs = append(h.Runs, res)
		}
		if err != nil {
			return res, err
		}
		if res.ExitCode != 0 {
			return res, fmt.Errorf("capture history: %s: claude exited %d (stderr tail: %q)", sc.Name, res.ExitCode, clipTail(res.StderrTail, 2000))
		}
		return res, nil
	}
	first, err := run(HistorySession())
	if err != nil {
		return h, err
	}
	projDir := filepath.Join(first.TempDir, "home", ".claude", "projects", claudedirs.ProjectFolder(filepath.Join(first.TempDir, "project")))
	if h.SessionID, err = onlySession(projDir); err != nil {
		return h, fmt.Errorf("capture history: %w", err)
	}
	second, err := run(HistoryResume(h.SessionID, projDir))
	if err != nil {
		return h, err
	}
	projDir2 := filepath.Join(second.TempDir, "home", ".claude", "projects", claudedirs.ProjectFolder(filepath.Join(second.TempDir, "project")))
	ids, err := sessions(projDir2)
	if err != nil {
		return h, fmt.Errorf("capture history: %w", err)
	}
	h.ResumeID = h.SessionID
	for _, id := range ids {
		if id != h.SessionID {
			h.ResumeID = id
		}
	}

	// Anonymize: the longest temp paths first; both runs map to one name.
	var repl []string
	for _, t := range []string{second.TempDir, first.TempDir} {
		repl = append(repl, t, HistoryHome, claudedirs.ProjectFolder(t), claudedirs.ProjectFolder(HistoryHome))
	}
	r := strings.NewReplacer(repl...)
	dst := filepath.Join(h.Dir, "projects")
	if err := copyTree(filepath.Join(second.TempDir, "home", ".claude", "projects"), dst, r); err != nil {
		return h, fmt.Errorf("capture history: %w", err)
	}
	if err := anonymizeDir(streamDir, r); err != nil {
		return h, fmt.Errorf("capture history: %w", err)
	}
	var tree []string
	home := filepath.Join(second.TempDir, "home")
	_ = filepath.WalkDir(home, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == home {
			return nil
		}
		rel, _ := filepath.Rel(home, p)
		if d.IsDir() {
			rel += "/"
		}
		tree = append(tree, r.Replace(rel))
		return nil
	})
	slices.Sort(tree)
	if err := os.WriteFile(filepath.Join(h.Dir, "home-tree.txt"), []byte(strings.Join(tree, "\n")+"\n"), 0o644); err != nil {
		return h, err
	}
	return h, nil
}

// sessions lists the session ids (<id>.jsonl) in a project folder.
func sessions(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, e := range ents {
		if id, ok := strings.CutSuffix(e.Name(), ".jsonl"); ok && e.Type().IsRegular() {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

func onlySession(dir string) (string, error) {
	ids, err := sessions(dir)
	if err != nil {
		return "", err
	}
	if len(ids) != 1 {
		return "", fmt.Errorf("%s holds %d session files, want 1: %v", dir, len(ids), ids)
	}
	return ids[0], nil
}

// copyTree copies the regular files under src to dst, renaming path
// elements and rewriting file contents with r when r is not nil. Symlinks
// are not followed.
func copyTree(src, dst string, r *strings.Replacer) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		if r != nil {
			rel = r.Replace(rel)
		}
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case !d.Type().IsRegular():
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if r != nil {
			b = []byte(r.Replace(string(b)))
		}
		return os.WriteFile(target, b, 0o644)
	})
}

// anonymizeDir rewrites the files directly in dir with r.
func anonymizeDir(dir string, r *strings.Replacer) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		p := filepath.Join(dir, e.Name())
		b, err := os.ReadFile(p)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if nb := []byte(r.Replace(string(b))); !bytes.Equal(nb, b) {
			errs = append(errs, os.WriteFile(p, nb, 0o644))
		}
	}
	return errors.Join(errs...)
}
