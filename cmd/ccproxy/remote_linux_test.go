package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ccproxy/ccproxy/internal/testkit"
)

// openPTY opens a pseudo-terminal: the master to read, the slave to give a
// child as its stderr.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	fd := int(m.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		m.Close()
		t.Fatalf("unlocking the pty: %v", err)
	}
	n, err := unix.IoctlGetUint32(fd, unix.TIOCGPTN)
	if err != nil {
		m.Close()
		t.Fatalf("pty number: %v", err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		m.Close()
		t.Fatalf("opening the pty's slave: %v", err)
	}
	return m, s
}

// TestServeQRWhenTerminal: with stderr a terminal and no --qr, serve
// draws the login QR code only when it listens off loopback (a phone could
// not reach loopback).
func TestServeQRWhenTerminal(t *testing.T) {
	bin := testkit.CCProxyBinary(t)
	for _, tc := range []struct {
		args []string
		qr   bool
	}{
		{[]string{"--addr", "0.0.0.0:0", "--tls-self-signed"}, true},
		{[]string{"--addr", "127.0.0.1:0", "--tls-self-signed"}, false},
		{[]string{"--addr", "127.0.0.1:0"}, false},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			master, slave := openPTY(t)
			marker := fmt.Sprintf("qr-test-%d", time.Now().UnixNano())
			cmd := exec.Command(bin, append([]string{"serve", "--demo", "--project", t.TempDir()}, tc.args...)...)
			cmd.Env = append(testkit.WithoutEnv(os.Environ(), "CCPROXY_TOKEN"), "CCPROXY_TEST_MARKER="+marker)
			cmd.Stderr = slave
			testkit.DieWithTest(cmd)
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			slave.Close() // the child has it; the master reads EIO once the child is gone
			var out testkit.SyncBuffer
			copied := make(chan struct{})
			go func() { io.Copy(&out, master); close(copied) }()
			exited := make(chan error, 1)
			br := bufio.NewReader(stdout)
			first, firstErr := br.ReadString('\n')
			go func() { io.Copy(io.Discard, br); exited <- cmd.Wait() }()
			defer func() {
				cmd.Process.Signal(syscall.SIGTERM)
				select {
				case err := <-exited:
					if err != nil {
						t.Errorf("serve: %v", err)
					}
				case <-time.After(testkit.UIWait):
					cmd.Process.Kill()
					t.Errorf("serve did not exit after SIGTERM")
				}
				<-copied
				master.Close()
				testkit.CheckNothingLeft(t, marker)
			}()
			if firstErr != nil {
				t.Fatalf("no first line: %v", firstErr)
			}
			if !out.WaitFor("ccproxy serving", testkit.UIWait) {
				t.Fatalf("serve did not say it serves:\n%s", out.String())
			}
			got := strings.Contains(out.String(), "Scan this one-time login link with a phone")
			if got != tc.qr {
				t.Errorf("QR code drawn: %v, want %v; first line %s\nstderr:\n%s", got, tc.qr, first, out.String())
			}
		})
	}
}
