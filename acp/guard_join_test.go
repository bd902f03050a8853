package acp_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"os"
	"testing"
	"time"

	"github.com/ccproxy/ccproxy/acp"
	"github.com/ccproxy/ccproxy/protocol/client"
	"github.com/ccproxy/ccproxy/proxy"
)

// When ccproxy goes away while the editor's input stays open (stdin, a
// pipe), Serve returns only after its guard has stopped reading that
// input: what the editor writes next is not read by a goroutine nobody
// owns.
func TestServeJoinsGuard(t *testing.T) {
	token := "guard-join-test-token-0123456789"
	srv, err := proxy.New(proxy.Options{Token: token, Project: t.TempDir(), Logger: slog.New(slog.DiscardHandler),
		ReplayOptions: proxy.ReplayOptions{SpoolDir: t.TempDir()}, HistoryOptions: proxy.HistoryOptions{HistoryHome: "-"}})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() { cancel(); <-served })
	b, err := client.Dial(ctx, "http://"+ln.Addr().String(), token)
	if err != nil {
		t.Fatal(err)
	}
	rd, wr, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	defer wr.Close()
	agent := acp.NewAgent(b, slog.New(slog.DiscardHandler))
	done := make(chan error, 1)
	go func() { done <- agent.Serve(io.Discard, rd) }()

	b.Close() // ccproxy's side ends; the editor's input stays open
	if err := <-done; err != nil && err != client.ErrClosed {
		t.Fatalf("Serve: %v", err)
	}
	// The guard is gone: a line written now is still there to read.
	if _, err := wr.Write([]byte("{\"jsonrpc\":\"2.0\",\"method\":\"x\"}\n")); err != nil {
		t.Fatal(err)
	}
	if err := rd.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	n, err := rd.Read(buf)
	if err != nil || string(buf[:n]) != "{\"jsonrpc\":\"2.0\",\"method\":\"x\"}\n" {
		t.Fatalf("after Serve returned, reading the input got %q, %v: its guard still reads it", buf[:n], err)
	}
}
