package fakeclaude

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
)

var scripts Scripts

func TestMain(m *testing.M) {
	Run(m, func(s Scripts) { scripts = s })
}

// session is a fake claude run by a test: lines go to its stdin, events
// are read from its stdout.
type session struct {
	t   *testing.T
	in  io.WriteCloser
	out *bufio.Scanner
	cmd *exec.Cmd
}

func startFake(t *testing.T, args ...string) *session {
	t.Helper()
	cmd := exec.Command(scripts.Claude, args...)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close(); cmd.Process.Kill(); cmd.Wait() })
	sc := bufio.NewScanner(out)
	sc.Buffer(nil, 4<<20)
	return &session{t: t, in: in, out: sc, cmd: cmd}
}

func (s *session) send(v any) {
	s.t.Helper()
	b, _ := json.Marshal(v)
	if _, err := s.in.Write(append(b, '\n')); err != nil {
		s.t.Fatal(err)
	}
}

func (s *session) user(text string) {
	s.send(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": text}})
}

// next reads the next event.
func (s *session) next() map[string]any {
	s.t.Helper()
	if !s.out.Scan() {
		s.t.Fatalf("no more events: %v", s.out.Err())
	}
	var ev map[string]any
	if err := json.Unmarshal(s.out.Bytes(), &ev); err != nil {
		s.t.Fatalf("event %q: %v", s.out.Text(), err)
	}
	return ev
}

// until reads events up to the first of type typ, and returns them all.
func (s *session) until(typ string) []map[string]any {
	s.t.Helper()
	var evs []map[string]any
	for {
		ev := s.next()
		evs = append(evs, ev)
		if ev["type"] == typ {
			return evs
		}
	}
}

func types(evs []map[string]any) string {
	var ts []string
	for _, ev := range evs {
		ts = append(ts, ev["type"].(string))
	}
	return strings.Join(ts, " ")
}

// Like the real CLI, the fake streams a text_delta before each assistant
// text only with --include-partial-messages.
func TestPartialMessages(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "system assistant result"},
		{[]string{"--include-partial-messages"}, "system stream_event assistant result"},
	} {
		s := startFake(t, tc.args...)
		s.user("hello")
		if got := types(s.until("result")); got != tc.want {
			t.Errorf("%v: events %s, want %s", tc.args, got, tc.want)
		}
	}
}

// The fake's own control requests are numbered fake-req-N, N the lowest
// not pending: an answered request's id comes back, two pending at once
// differ.
func TestRequestIDs(t *testing.T) {
	s := startFake(t)
	allow := func(id string) {
		s.send(map[string]any{"type": "control_response", "response": map[string]any{"subtype": "success", "request_id": id,
			"response": map[string]any{"behavior": "allow", "updatedInput": map[string]any{}}}})
	}
	// ids plays a turn and returns the ids of the fake's requests, which
	// are all answered once the pending-th has arrived (none, with 0).
	ids := func(text string, pending int) []string {
		s.user(text)
		var got []string
		for {
			ev := s.next()
			switch ev["type"] {
			case "control_request":
				got = append(got, ev["request_id"].(string))
				if len(got) == pending {
					for _, id := range got {
						allow(id)
					}
				}
			case "result":
				return got
			}
		}
	}
	if got := strings.Join(ids("ask", 1), " "); got != "fake-req-1" {
		t.Errorf("ask: requests %s", got)
	}
	if got := strings.Join(ids("cancel", 0), " "); got != "fake-req-1" {
		t.Errorf("cancel: requests %s", got)
	}
	if got := strings.Join(ids("permtwice", 2), " "); got != "fake-req-1 fake-req-2" {
		t.Errorf("permtwice: requests %s", got)
	}
}

// --version reports Version, the Old script OldVersion.
func TestVersion(t *testing.T) {
	for path, want := range map[string]string{scripts.Claude: Version, scripts.Old: OldVersion} {
		out, err := exec.Command(path, "--version").Output()
		if err != nil || string(out) != want+" (Claude Code)\n" {
			t.Errorf("%s --version = %q, %v; want %s", path, out, err, want)
		}
	}
}
