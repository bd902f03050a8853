package testkit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// UIWait is how long the tests that drive a `ccproxy serve` wait for
// something to show: a page state in the browser tests, a line on serve's
// stderr.
const UIWait = 30 * time.Second

// CCProxyBinary builds cmd/ccproxy (once per test process, BuildCommand) and
// returns the binary's path.
func CCProxyBinary(t testing.TB) string {
	t.Helper()
	path, err := BuildCommand("github.com/ccproxy/ccproxy/cmd/ccproxy")
	if err != nil {
		t.Fatalf("building ccproxy: %v", err)
	}
	return path
}

// Served is a `ccproxy serve` process started by StartServe; it is stopped
// (SIGTERM) when the test ends, which then checks nothing it started is
// left.
type Served struct {
	// First is serve's first line on stdout.
	First struct {
		URL, LoginURL, Token    string
		Port                    int
		TLSFingerprint, TLSSPKI string
	}
	Stderr *SyncBuffer // serve's stderr (the log, the fingerprint, the QR code)
}

// StartServe runs bin (CCProxyBinary) as `serve --addr 127.0.0.1:0
// --project <temp dir> --warm 0` with args added, reads its first line, and
// stops it when the test ends: it must exit within 20 s of SIGTERM, cleanly,
// and leave no process behind. --warm 0 unless args give --warm: a spare is
// a whole claude started beside the session's, which a test about something
// else pays for in CPU on a loaded machine (the tests of spares, and some
// others that must hold with one, pass --warm 1).
func StartServe(t testing.TB, bin string, args ...string) *Served {
	t.Helper()
	return StartServeEnv(t, bin, nil, args...)
}

// StartServeEnv is StartServe with env added to serve's environment.
func StartServeEnv(t testing.TB, bin string, env []string, args ...string) *Served {
	t.Helper()
	marker := fmt.Sprintf("ui-test-%d", time.Now().UnixNano())
	base := []string{"serve", "--addr", "127.0.0.1:0", "--project", t.TempDir()}
	if !slices.ContainsFunc(args, func(a string) bool { return a == "--warm" || strings.HasPrefix(a, "--warm=") }) {
		base = append(base, "--warm", "0")
	}
	cmd := exec.Command(bin, append(base, args...)...)
	cmd.Env = append(append(WithoutEnv(os.Environ(), "CCPROXY_TOKEN"), env...), "CCPROXY_TEST_MARKER="+marker)
	DieWithTest(cmd)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr SyncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(stdout)
	line, err := br.ReadString('\n')
	done := make(chan error, 1)
	go func() {
		io.Copy(io.Discard, br) // anything after the first line
		done <- cmd.Wait()
	}()
	s := &Served{Stderr: &stderr}
	if err != nil {
		cmd.Process.Kill()
		t.Fatalf("serve: no first line: %v\n%s", err, stderr.String())
	}
	if err := json.Unmarshal([]byte(line), &s.First); err != nil || s.First.LoginURL == "" {
		cmd.Process.Kill()
		t.Fatalf("serve: first line %q: %v", line, err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("serve exited with %v\n%s", err, stderr.String())
			}
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			t.Errorf("serve did not exit after SIGTERM")
		}
		CheckNothingLeft(t, marker)
		if t.Failed() {
			t.Logf("serve stderr:\n%s", stderr.String())
		}
	})
	return s
}

// CheckNothingLeft fails if processes started with marker (the value of
// CCPROXY_TEST_MARKER in their environment) are still alive after a few
// seconds (SIGKILLed ones may take a moment to go).
func CheckNothingLeft(t testing.TB, marker string) {
	t.Helper()
	if left := WaitGone("CCPROXY_TEST_MARKER="+marker, 5*time.Second); len(left) > 0 {
		t.Errorf("processes left running: %v", left)
	}
}

// WithoutEnv returns env without the variable name.
func WithoutEnv(env []string, name string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, name+"=") {
			out = append(out, kv)
		}
	}
	return out
}

// SyncBuffer is a bytes.Buffer a child's output can be written to while the
// test reads it.
type SyncBuffer struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	written chan struct{} // closed by the next Write (WaitFor's signal)
}

func (b *SyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.written != nil {
		close(b.written)
		b.written = nil
	}
	return b.buf.Write(p)
}

// WaitFor waits until the buffer holds s (a child's output is copied from
// its pipe by a goroutine of exec, so it may arrive after what the child
// did next), for at most limit; it reports whether s came.
func (b *SyncBuffer) WaitFor(s string, limit time.Duration) bool {
	timeout := time.After(limit)
	for {
		b.mu.Lock()
		if strings.Contains(b.buf.String(), s) {
			b.mu.Unlock()
			return true
		}
		if b.written == nil {
			b.written = make(chan struct{})
		}
		w := b.written
		b.mu.Unlock()
		select {
		case <-w:
		case <-timeout:
			return false
		}
	}
}

func (b *SyncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
