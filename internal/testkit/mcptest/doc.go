// Package mcptest is ccproxy's test MCP server, built with the official
// go-sdk, whose tools return every kind of content a client must cope with:
// one text, many texts, an image (SmallPNG), audio (WAV), an embedded text
// resource, an embedded blob, a resource_link, isError with content, empty
// content, structuredContent with an output schema, text with control
// characters, bidi, emoji and U+2028 (UnicodeText), a 5 MB text and a ~3 MiB
// noise PNG; plus slow (sleeps, reports progress, honours cancellation), echo
// (a rich input schema: required, enum, min/max, nested object, array) and
// fail (a JSON-RPC error, a tool error, or the process dying mid-call).
// Tool names and payloads are exported constants and functions, so tests
// can assert on exactly what the server sent. Everything is deterministic.
//
// # How it is used
//
// NewServer returns the *mcp.Server; connect it to any transport. The
// command internal/testkit/cmd/ccproxy-testmcp serves it over stdio (for an
// MCP config's "command") or streamable HTTP (--http ADDR). In tests,
// Command(t) builds that command once per test process and returns the
// binary's path, and ServeHTTP(t) serves the server over streamable HTTP on
// an httptest server:
//
//	bin := mcptest.Command(t)  // {"command": bin, "args": []}
//	ts := mcptest.ServeHTTP(t) // {"type": "http", "url": ts.URL}
//
// Data flow: a tools/call arrives from the transport, the SDK validates the
// arguments against the tool's schema (null arguments are first turned into
// {} to dodge a go-sdk v1.8.0 panic), the handler builds the content, and the
// SDK sends the result back (adding the output's JSON as text for
// structured).
package mcptest
