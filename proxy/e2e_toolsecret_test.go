package proxy

import (
	"bytes"
	"crypto/rand"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ccproxy/ccproxy/protocol"
)

// A tool that prints its environment (the everything server's get-env,
// called by claude) reaches clients with the server's configured secret
// masked: in the live event, in the replay log a new subscriber reads,
// and nowhere else in any frame.
func TestE2EToolResultSecretMasked(t *testing.T) {
	t.Parallel()
	e := startE2E(t, Options{})
	c := e.dial(t)
	s := c.create(nil)
	trs := toolResults(t, c.turn(s, "GETENV please"))
	if len(trs) != 1 || trs[0].IsError || !strings.Contains(string(trs[0].Content), `CCPROXY_E2E_KEY`) {
		t.Fatalf("get-env's result: %+v", trs)
	}
	if !strings.Contains(string(trs[0].Content), `\"CCPROXY_E2E_KEY\": \"***\"`) {
		t.Errorf("get-env's result does not show the secret masked: %s", trs[0].Content)
	}
	// The replay log, as a client subscribing afresh reads it.
	c2 := e.dial(t)
	from := c2.count()
	c2.do(protocol.TypeSessionSubscribe, map[string]any{"session": s})
	c2.waitEvent(from, s, "the replayed result", isResult)
	for _, cl := range []*wsClient{c, c2} {
		frames := cl.snapshot()
		if len(frames) == 0 {
			t.Fatal("no frames")
		}
		for _, f := range frames {
			if bytes.Contains(f.raw, []byte(e2eSecret)) {
				t.Fatalf("a frame holds the configured secret: %.300s", f.raw)
			}
		}
	}
}

// The secret-named environment values of ccproxy (CCPROXY_TEST_SECRET_TOKEN,
// which claude inherits) and of claude's environment alone
// (CCPROXY_TEST_CLAUDE_AUTH) are masked wherever tool output leaves the
// proxy, when a tool prints the environment: the everything server's
// get-env (an MCP tool) and Bash's env (claude's own). They are in no
// frame (the live events' content and tool_use_result, a fresh
// subscriber's replay, history/read and mcp/log replies), in no spill
// file of the replay log, and not in the call log (with its I/O kept).
func TestE2EProcessEnvSecretMasked(t *testing.T) {
	own, claudeOnly := randomSecret(t), randomSecret(t)
	t.Setenv("CCPROXY_TEST_SECRET_TOKEN", own)
	spool, callDir := t.TempDir(), t.TempDir()
	e := startE2E(t, Options{
		CLIOptions:    CLIOptions{ClaudeEnv: []string{"CCPROXY_TEST_SECRET_TOKEN=" + own, "CCPROXY_TEST_CLAUDE_AUTH=" + claudeOnly}},
		ReplayOptions: ReplayOptions{SpoolDir: spool, ReplayBytes: 4 << 10, ReplayMemoryBytes: 4 << 10}, // spill nearly everything
		MCPOptions:    MCPOptions{CallLogDir: callDir, CallLogIO: true},
	})
	secrets := []string{own, claudeOnly}
	c := e.dial(t)
	s := c.create(nil)

	trs := toolResults(t, c.turn(s, "GETENV please"))
	if len(trs) != 1 || trs[0].IsError || !strings.Contains(string(trs[0].Content), `\"CCPROXY_TEST_SECRET_TOKEN\": \"***\"`) {
		t.Fatalf("get-env's result does not show ccproxy's secret masked: %+v", trs)
	}
	_, evs := c.permTurn(t, s, "BASH-ENV now", func(protocol.PermissionRequest) map[string]any {
		return map[string]any{"behavior": "allow"}
	})
	var bashEvent []byte
	for _, ev := range evs {
		if eventType(ev) == "user" && bytes.Contains(ev.Event, []byte("CCPROXY_TEST_CLAUDE_AUTH")) {
			bashEvent = ev.Event
		}
	}
	if bashEvent == nil {
		t.Fatalf("no tool result of Bash env among %d events", len(evs))
	}
	for _, name := range []string{"CCPROXY_TEST_SECRET_TOKEN", "CCPROXY_TEST_CLAUDE_AUTH"} {
		if n := bytes.Count(bashEvent, []byte(name+"=***")); n < 2 { // content and tool_use_result
			t.Errorf("Bash env's result shows %s=*** %d times, want it in content and tool_use_result: %.2000s", name, n, bashEvent)
		}
	}
	if !bytes.Contains(bashEvent, []byte(`"tool_use_result"`)) {
		t.Errorf("Bash env's event has no tool_use_result: %.500s", bashEvent)
	}

	// A fresh subscriber's replay (read back from the spill files).
	c2 := e.dial(t)
	from := c2.count()
	c2.do(protocol.TypeSessionSubscribe, map[string]any{"session": s})
	c2.waitEvent(from, s, "the replayed result", isResult)
	// history/read of the session claude stored, and mcp/log.
	var l protocol.HistoryListResult
	mustUnmarshal(t, c2.do(protocol.TypeHistoryList, map[string]any{}), &l)
	read := 0
	for _, hs := range l.Sessions {
		events, _ := readHistory(t, c2, map[string]any{"id": hs.ID})
		for _, ev := range events {
			if bytes.Contains(ev.Event, []byte("CCPROXY_TEST_CLAUDE_AUTH=***")) {
				read++
			}
		}
	}
	if read == 0 {
		t.Errorf("history/read of %d sessions: no stored Bash env result with the secret masked", len(l.Sessions))
	}
	logReply := c2.do(protocol.TypeMCPLog, map[string]any{})
	if !bytes.Contains(logReply, []byte(`CCPROXY_TEST_SECRET_TOKEN\": \"***`)) {
		t.Errorf("mcp/log does not show get-env's output with the secret masked: %.1000s", logReply)
	}
	for _, cl := range []*wsClient{c, c2} {
		for _, f := range cl.snapshot() {
			for _, v := range secrets {
				if bytes.Contains(f.raw, []byte(v)) {
					t.Fatalf("a frame holds an environment secret: %.300s", f.raw)
				}
			}
		}
	}
	for dir, what := range map[string]string{spool: "replay log spill file", callDir: "call log"} {
		var files, masked int
		filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Errorf("%s: %v", what, err)
				return nil
			}
			files++
			for _, v := range secrets {
				if bytes.Contains(b, []byte(v)) {
					t.Errorf("%s %s holds an environment secret", what, path)
				}
			}
			if bytes.Contains(b, []byte("CCPROXY_TEST_SECRET_TOKEN")) && bytes.Contains(b, []byte("***")) {
				masked++
			}
			return nil
		})
		if masked == 0 {
			t.Errorf("no %s (of %d files) holds the masked output", what, files)
		}
	}
}

// randomSecret is 24 random letters and digits.
func randomSecret(t *testing.T) string {
	t.Helper()
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}
