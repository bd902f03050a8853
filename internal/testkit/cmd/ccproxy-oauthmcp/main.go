// Command ccproxy-oauthmcp serves the OAuth-protected test MCP server
// (internal/testkit/oauthmcp, with mcptest's tools) on loopback until it is
// interrupted, for trying `claude mcp login` by hand. It prints the MCP
// endpoint's URL on its first line.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/ccproxy/ccproxy/internal/testkit/mcptest"
	"github.com/ccproxy/ccproxy/internal/testkit/oauthmcp"
)

func main() {
	s := oauthmcp.New(mcptest.NewServer(), oauthmcp.Options{})
	defer s.Close()
	fmt.Println(s.URL)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	c := s.Counts()
	fmt.Fprintf(os.Stderr, "registrations %d, authorizations %d, tokens %d, MCP requests: %d refused, %d served\n",
		c.Registrations, c.Authorizations, c.Tokens, c.Unauthorized, c.Authorized)
}
