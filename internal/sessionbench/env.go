//go:build linux

package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/tidwall/gjson"

	"github.com/ccproxy/ccproxy/internal/testkit"
	"github.com/ccproxy/ccproxy/internal/testkit/fakeapi"
	"github.com/ccproxy/ccproxy/protocol"
	"github.com/ccproxy/ccproxy/protocol/client"
)

// benchEnv is what every scenario shares: a built ccproxy, the real CLI,
// the fake API, and a scratch directory.
type benchEnv struct {
	ccproxy, claude, claudeVersion string
	api                            *fakeapi.Server
	dir                            string
	n                              int // homes made
}

func newEnv() (*benchEnv, error) {
	claude, err := testkit.ClaudePath()
	if err != nil {
		return nil, fmt.Errorf("the Claude Code CLI: %w (set $CCPROXY_DEPS to the npm prefix scripts/test.sh installs into)", err)
	}
	out, err := exec.Command(claude, "--version").Output()
	if err != nil {
		return nil, fmt.Errorf("%s --version: %w", claude, err)
	}
	bin, err := testkit.BuildCommand("github.com/ccproxy/ccproxy/cmd/ccproxy")
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "sessionbench-")
	if err != nil {
		return nil, err
	}
	// Every turn gets the same short reply: what is measured is the path
	// to it, not the model.
	api := fakeapi.NewServer(nil, &fakeapi.Options{Fallback: func(*fakeapi.Request) *fakeapi.Reply { return fakeapi.Say("Hello from the bench.") }})
	return &benchEnv{ccproxy: bin, claude: claude, claudeVersion: strings.Fields(string(out))[0], api: api, dir: dir}, nil
}

func (e *benchEnv) close() {
	e.api.Close()
	os.RemoveAll(e.dir)
}

// home makes a fresh HOME and a project directory in it, and returns them
// with the environment the CLI runs in.
func (e *benchEnv) home() (home, project string, env []string, err error) {
	e.n++
	home = filepath.Join(e.dir, "home"+strconv.Itoa(e.n))
	project = filepath.Join(home, "project")
	for _, d := range []string{project, filepath.Join(home, "tmp")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return "", "", nil, err
		}
	}
	return home, project, e.api.Env(home), nil
}

// served is a running `ccproxy serve`.
type served struct {
	cmd        *exec.Cmd
	url, token string
	project    string
}

// serve starts ccproxy serve on a loopback port with extra flags, and
// waits for its first line.
func (e *benchEnv) serve(extra ...string) (*served, error) {
	_, project, env, err := e.home()
	if err != nil {
		return nil, err
	}
	args := append([]string{"serve", "--claude", e.claude, "--addr", "127.0.0.1:0", "--project", project, "--no-ui", "--log-level", "warn"}, extra...)
	cmd := exec.Command(e.ccproxy, args...)
	cmd.Env = append(env, "CCPROXY_TOKEN=")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		return nil, fmt.Errorf("serve %v: no first line: %w", extra, err)
	}
	s := &served{cmd: cmd, url: gjson.Get(line, "url").Str, token: gjson.Get(line, "token").Str, project: project}
	if s.url == "" || s.token == "" {
		s.stop()
		return nil, fmt.Errorf("serve's first line: %s", line)
	}
	return s, nil
}

// stop ends serve (SIGTERM: it closes its sessions) and waits.
func (s *served) stop() {
	s.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
}

// chat is one session of a served ccproxy, on its own connection, with
// its events delivered to a channel.
type chat struct {
	c      *client.Client
	id     string
	events chan frameAt
}

type frameAt struct {
	at  time.Time
	typ string // the event's type (session/event), or the frame's type
	raw []byte
}

func (s *served) dial(ctx context.Context) (*client.Client, error) {
	c, err := client.Dial(ctx, s.url, s.token)
	if err != nil {
		return nil, err
	}
	if _, err := c.Hello(ctx); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// newChat dials, creates a session and subscribes to it.
func (s *served) newChat(ctx context.Context) (*chat, error) {
	c, err := s.dial(ctx)
	if err != nil {
		return nil, err
	}
	var res protocol.SessionCreateResult
	if err := c.Request(ctx, protocol.TypeSessionCreate, &protocol.SessionCreate{}, &res); err != nil {
		c.Close()
		return nil, fmt.Errorf("session/create: %w", err)
	}
	ch := &chat{c: c, id: res.Session, events: make(chan frameAt, 4096)}
	c.Handle(res.Session, func(f protocol.Frame) {
		fa := frameAt{at: time.Now(), typ: f.Type, raw: f.Data}
		if f.Type == protocol.TypeSessionEvent {
			fa.typ = gjson.GetBytes(f.Data, "event.type").Str
		}
		select {
		case ch.events <- fa:
		default: // the bench reads what it needs; the rest may drop
		}
	})
	if err := c.Request(ctx, protocol.TypeSessionSubscribe, &protocol.SessionSubscribe{Session: res.Session}, nil); err != nil {
		c.Close()
		return nil, fmt.Errorf("session/subscribe: %w", err)
	}
	return ch, nil
}

// turn sends text and returns when the first assistant output arrives
// (its time), then waits for the turn's result.
func (ch *chat) turn(ctx context.Context, text string) (first time.Time, err error) {
	// What is already queued belongs to earlier turns.
	for len(ch.events) > 0 {
		<-ch.events
	}
	if err := ch.c.Request(ctx, protocol.TypeSessionSend, &protocol.SessionSend{Session: ch.id, Text: text}, nil); err != nil {
		return time.Time{}, fmt.Errorf("session/send: %w", err)
	}
	for {
		select {
		case f := <-ch.events:
			switch f.typ {
			case "assistant", "stream_event":
				if first.IsZero() {
					first = f.at
				}
			case "result":
				if first.IsZero() {
					return first, errors.New("the turn ended with no assistant output: " + string(f.raw))
				}
				return first, nil
			case protocol.TypeSessionExited:
				return first, errors.New("claude exited: " + string(f.raw))
			}
		case <-ctx.Done():
			return first, ctx.Err()
		}
	}
}

// waitState waits for a session/state push naming state.
func (ch *chat) waitState(ctx context.Context, state string) error {
	for {
		select {
		case f := <-ch.events:
			if f.typ == protocol.TypeSessionState && gjson.GetBytes(f.raw, "state").Str == state {
				return nil
			}
		case <-ctx.Done():
			return fmt.Errorf("waiting for state %s: %w", state, ctx.Err())
		}
	}
}

func (ch *chat) close() { ch.c.Close() }

// treeRSS is the resident memory of pid and every process under it, in
// MiB (Linux /proc: every process's parent is read from its stat line,
// as a child may have been started from any thread of its parent).
func treeRSS(pid int) (float64, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	kids := map[int][]int{}
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", n))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses.
		rest := string(b[strings.LastIndexByte(string(b), ')')+1:])
		if f := strings.Fields(rest); len(f) >= 2 {
			if pp, err := strconv.Atoi(f[1]); err == nil {
				kids[pp] = append(kids[pp], n)
			}
		}
	}
	var total int64
	for todo := []int{pid}; len(todo) > 0; {
		p := todo[len(todo)-1]
		todo = append(todo[:len(todo)-1], kids[p]...)
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p))
		if err != nil {
			continue // gone meanwhile
		}
		for _, l := range strings.Split(string(b), "\n") {
			if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
				kb, _ := strconv.ParseInt(f[1], 10, 64)
				total += kb
			}
		}
	}
	if total == 0 {
		return 0, fmt.Errorf("no process %d", pid)
	}
	return float64(total) / 1024, nil
}
