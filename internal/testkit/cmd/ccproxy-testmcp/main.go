// Command ccproxy-testmcp serves ccproxy's test MCP server (package
// internal/testkit/mcptest): over stdio by default, or over streamable HTTP
// with --http ADDR.
//
//	ccproxy-testmcp                     # stdio, for an MCP client's command
//	ccproxy-testmcp --http 127.0.0.1:0  # prints the URL it serves on stderr
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ccproxy/ccproxy/internal/testkit/mcptest"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "ccproxy-testmcp:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("ccproxy-testmcp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("http", "", "serve streamable HTTP on `ADDR` (host:port) instead of stdio")
	verbose := fs.Bool("v", false, "log the MCP traffic to stderr")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q (the only flags are --http ADDR and -v)", fs.Args())
	}
	logger := slog.New(slog.DiscardHandler)
	if *verbose {
		logger = slog.New(slog.NewTextHandler(stderr, nil))
	}
	srv := mcptest.NewServerWith(mcptest.Options{Logger: logger, AllowExit: true})
	if *addr == "" {
		if err := srv.Run(ctx, &mcp.StdioTransport{}); err != nil && !errors.Is(err, context.Canceled) {
			return fmt.Errorf("serving stdio: %w", err)
		}
		return nil
	}
	return serveHTTP(ctx, srv, *addr, stderr)
}

func serveHTTP(ctx context.Context, srv *mcp.Server, addr string, stderr io.Writer) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("--http %s: %w", addr, err)
	}
	hs := &http.Server{
		Handler:           mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil),
		ReadHeaderTimeout: 10 * time.Second,
	}
	fmt.Fprintf(stderr, "ccproxy-testmcp: serving MCP over streamable HTTP at http://%s/\n", ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serving HTTP: %w", err)
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := hs.Shutdown(shutdown); err != nil {
		hs.Close()
	}
	<-errc
	return nil
}
