package mcptest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ServerName is the name the server reports in its initialize result.
const ServerName = "ccproxy-testmcp"

// The server's tools. Claude Code calls them mcp__<config name>__<tool>.
const (
	ToolText         = "text"          // one text block
	ToolTexts        = "texts"         // {count} text blocks (default 3)
	ToolImage        = "image"         // one image block: SmallPNG
	ToolAudio        = "audio"         // one audio block: WAV
	ToolResourceText = "resource_text" // an embedded text resource
	ToolResourceBlob = "resource_blob" // an embedded blob resource: BlobBytes
	ToolResourceLink = "resource_link" // a text and a resource_link to ResourceTextURI
	ToolIsError      = "is_error"      // isError:true with two text blocks
	ToolEmpty        = "empty"         // content: []
	ToolStructured   = "structured"    // structuredContent (Weather) with an output schema
	ToolUnicode      = "unicode"       // UnicodeText
	ToolLargeText    = "large_text"    // a text of {bytes} bytes (default LargeTextBytes)
	ToolLargeImage   = "large_image"   // LargePNG, about 3 MiB
	ToolSlow         = "slow"          // sleeps {ms} (default 1000), honours cancellation, reports progress
	ToolEcho         = "echo"          // echoes its input; rich input schema
	ToolFail         = "fail"          // a protocol error, a tool error, or (when allowed) the process exits
)

// ToolNames lists every tool, in the order they are registered.
var ToolNames = []string{
	ToolText, ToolTexts, ToolImage, ToolAudio, ToolResourceText, ToolResourceBlob,
	ToolResourceLink, ToolIsError, ToolEmpty, ToolStructured, ToolUnicode,
	ToolLargeText, ToolLargeImage, ToolSlow, ToolEcho, ToolFail,
}

// Fixed payloads, exported for assertions.
const (
	OneText          = "hello from testmcp"
	ResourceTextURI  = "testmcp://docs/readme.txt"
	ResourceTextBody = "# testmcp readme\nAn embedded text resource.\n"
	ResourceBlobURI  = "testmcp://blobs/bytes.bin"
	IsErrorText      = "the widget is broken (code 42)"
	FailProtocolText = "testmcp: deliberate protocol error"
	FailToolText     = "testmcp: deliberate tool failure"
	MaxTexts         = 50
	MaxLargeText     = 64 << 20
	MaxSlowMillis    = 600_000
)

// Options tune the server. The zero value is what NewServer uses.
type Options struct {
	// Logger receives the SDK's log; nil discards.
	Logger *slog.Logger
	// AllowExit lets the fail tool with mode "exit" end the process (exit
	// status 3) in the middle of the call. Only a standalone server process
	// may allow it; in-process servers answer with a tool error instead.
	AllowExit bool
}

// NewServer returns the test MCP server with all its tools and two
// resources (ResourceTextURI, ResourceBlobURI). Connect it to any transport.
func NewServer() *mcp.Server { return NewServerWith(Options{}) }

// NewServerWith is NewServer with options.
func NewServerWith(opts Options) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: ServerName, Title: "ccproxy test MCP server", Version: "1.0.0"},
		&mcp.ServerOptions{
			Logger:       opts.Logger,
			Instructions: "Test server for ccproxy: every tool returns a different kind of MCP content.",
		})
	s.AddReceivingMiddleware(nullArgumentsAsEmpty)
	addTools(s, opts)
	addResources(s)
	return s
}

// nullArgumentsAsEmpty turns a tools/call with "arguments": null into one
// with {}. go-sdk v1.8.0 panics (and the whole server dies) when it applies
// schema defaults to null arguments; clients such as the go-sdk client send
// null for a nil map.
func nullArgumentsAsEmpty(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if r, ok := req.(*mcp.CallToolRequest); ok && r.Params != nil &&
			strings.TrimSpace(string(r.Params.Arguments)) == "null" {
			r.Params.Arguments = json.RawMessage("{}")
		}
		return next(ctx, method, req)
	}
}

type noInput struct{}

// Weather is the structured tool's output (its output schema is inferred
// from this type).
type Weather struct {
	City         string        `json:"city" jsonschema:"the city asked for"`
	TemperatureC float64       `json:"temperature_c"`
	Conditions   string        `json:"conditions"`
	Humidity     int           `json:"humidity"`
	Forecast     []DayForecast `json:"forecast"`
}

// DayForecast is one day of Weather.Forecast.
type DayForecast struct {
	Day  string  `json:"day"`
	High float64 `json:"high"`
	Low  float64 `json:"low"`
}

// EchoInput is the echo tool's input.
type EchoInput struct {
	Message string       `json:"message"`
	Mode    string       `json:"mode,omitempty"`
	Repeat  int          `json:"repeat,omitempty"`
	Options *EchoOptions `json:"options,omitempty"`
	Numbers []float64    `json:"numbers,omitempty"`
}

// EchoOptions is the nested object of EchoInput.
type EchoOptions struct {
	Prefix string   `json:"prefix,omitempty"`
	Tags   []string `json:"tags,omitempty"`
}

const echoSchema = `{
  "type": "object",
  "properties": {
    "message": {"type": "string", "minLength": 1, "maxLength": 10000, "description": "text to echo"},
    "mode": {"type": "string", "enum": ["plain", "upper", "reverse"], "default": "plain", "description": "how to transform the message"},
    "repeat": {"type": "integer", "minimum": 1, "maximum": 5, "default": 1, "description": "how many times to repeat it"},
    "options": {
      "type": "object",
      "properties": {
        "prefix": {"type": "string", "description": "put before each line"},
        "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 5, "uniqueItems": true}
      },
      "additionalProperties": false
    },
    "numbers": {"type": "array", "items": {"type": "number", "minimum": -1000, "maximum": 1000}, "maxItems": 10}
  },
  "required": ["message"],
  "additionalProperties": false
}`

func text(s string) *mcp.TextContent { return &mcp.TextContent{Text: s} }

func result(c ...mcp.Content) *mcp.CallToolResult { return &mcp.CallToolResult{Content: c} }

func addTools(s *mcp.Server, opts Options) {
	mcp.AddTool(s, &mcp.Tool{Name: ToolText, Description: "Returns one text block."},
		func(context.Context, *mcp.CallToolRequest, noInput) (*mcp.CallToolResult, any, error) {
			return result(text(OneText)), nil, nil
		})

	type textsIn struct {
		Count int `json:"count,omitempty"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: ToolTexts, Description: "Returns several text blocks.",
		InputSchema: json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{"count":{"type":"integer","minimum":1,"maximum":%d,"default":3}},"additionalProperties":false}`, MaxTexts))},
		func(_ context.Context, _ *mcp.CallToolRequest, in textsIn) (*mcp.CallToolResult, any, error) {
			n := in.Count
			if n == 0 {
				n = 3
			}
			var c []mcp.Content
			for i := 1; i <= n; i++ {
				c = append(c, text(fmt.Sprintf("part %d of %d", i, n)))
			}
			return result(c...), nil, nil
		})

	mcp.AddTool(s, &mcp.Tool{Name: ToolImage, Description: "Returns a small PNG image (16x16)."},
		func(context.Context, *mcp.CallToolRequest, noInput) (*mcp.CallToolResult, any, error) {
			return result(&mcp.ImageContent{MIMEType: "image/png", Data: SmallPNG()}), nil, nil
		})

	mcp.AddTool(s, &mcp.Tool{Name: ToolAudio, Description: "Returns a short WAV sound."},
		func(context.Context, *mcp.CallToolRequest, noInput) (*mcp.CallToolResult, any, error) {
			return result(&mcp.AudioContent{MIMEType: "audio/wav", Data: WAV()}), nil, nil
		})

	mcp.AddTool(s, &mcp.Tool{Name: ToolResourceText, Description: "Returns an embedded text resource."},
		func(context.Context, *mcp.CallToolRequest, noInput) (*mcp.CallToolResult, any, error) {
			return result(&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{
				URI: ResourceTextURI, MIMEType: "text/markdown", Text: ResourceTextBody}}), nil, nil
		})

	mcp.AddTool(s, &mcp.Tool{Name: ToolResourceBlob, Description: "Returns an embedded binary resource (256 bytes)."},
		func(context.Context, *mcp.CallToolRequest, noInput) (*mcp.CallToolResult, any, error) {
			return result(&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{
				URI: ResourceBlobURI, MIMEType: "application/octet-stream", Blob: BlobBytes()}}), nil, nil
		})

	mcp.AddTool(s, &mcp.Tool{Name: ToolResourceLink, Description: "Returns a text and a link to a resource."},
		func(context.Context, *mcp.CallToolRequest, noInput) (*mcp.CallToolResult, any, error) {
			size := int64(len(ResourceTextBody))
			return result(
				text("here is a link to the readme"),
				&mcp.ResourceLink{URI: ResourceTextURI, Name: "readme.txt", Title: "Readme",
					Description: "the test server's readme", MIMEType: "text/markdown", Size: &size},
			), nil, nil
		})

	mcp.AddTool(s, &mcp.Tool{Name: ToolIsError, Description: "Fails: isError true, with content."},
		func(context.Context, *mcp.CallToolRequest, noInput) (*mcp.CallToolResult, any, error) {
			r := result(text(IsErrorText), text("details: try turning it off and on again"))
			r.IsError = true
			return r, nil, nil
		})

	mcp.AddTool(s, &mcp.Tool{Name: ToolEmpty, Description: "Returns no content at all."},
		func(context.Context, *mcp.CallToolRequest, noInput) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{}}, nil, nil
		})

	type cityIn struct {
		City string `json:"city,omitempty"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: ToolStructured, Description: "Returns the weather as structuredContent (with an output schema).",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string","default":"Paris"}},"additionalProperties":false}`)},
		func(_ context.Context, _ *mcp.CallToolRequest, in cityIn) (*mcp.CallToolResult, Weather, error) {
			return nil, Weather{City: in.City, TemperatureC: 21.5, Conditions: "partly cloudy", Humidity: 64,
				Forecast: []DayForecast{{Day: "Mon", High: 23, Low: 14}, {Day: "Tue", High: 19.5, Low: 12}}}, nil
		})

	mcp.AddTool(s, &mcp.Tool{Name: ToolUnicode, Description: "Returns text with control characters, bidi, emoji and U+2028."},
		func(context.Context, *mcp.CallToolRequest, noInput) (*mcp.CallToolResult, any, error) {
			return result(text(UnicodeText)), nil, nil
		})

	type largeIn struct {
		Bytes int `json:"bytes,omitempty"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: ToolLargeText, Description: "Returns one large text (5,000,000 bytes by default).",
		InputSchema: json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{"bytes":{"type":"integer","minimum":1,"maximum":%d,"default":%d}},"additionalProperties":false}`, MaxLargeText, LargeTextBytes))},
		func(_ context.Context, _ *mcp.CallToolRequest, in largeIn) (*mcp.CallToolResult, any, error) {
			n := in.Bytes
			if n == 0 {
				n = LargeTextBytes
			}
			return result(text(LargeText(n))), nil, nil
		})

	mcp.AddTool(s, &mcp.Tool{Name: ToolLargeImage, Description: "Returns a 1024x1024 PNG of noise (about 3 MiB)."},
		func(context.Context, *mcp.CallToolRequest, noInput) (*mcp.CallToolResult, any, error) {
			return result(&mcp.ImageContent{MIMEType: "image/png", Data: LargePNG()}), nil, nil
		})

	type slowIn struct {
		Ms int `json:"ms,omitempty"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: ToolSlow, Description: "Sleeps for ms milliseconds (default 1000), reporting progress; stops when cancelled.",
		InputSchema: json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{"ms":{"type":"integer","minimum":0,"maximum":%d,"default":1000}},"additionalProperties":false}`, MaxSlowMillis))},
		func(ctx context.Context, req *mcp.CallToolRequest, in slowIn) (*mcp.CallToolResult, any, error) {
			return slow(ctx, req, time.Duration(in.Ms)*time.Millisecond)
		})

	mcp.AddTool(s, &mcp.Tool{Name: ToolEcho, Description: "Echoes the message, transformed; also reports the input it received.",
		InputSchema: json.RawMessage(echoSchema)},
		func(_ context.Context, _ *mcp.CallToolRequest, in EchoInput) (*mcp.CallToolResult, any, error) {
			return echo(in), nil, nil
		})

	type failIn struct {
		Mode string `json:"mode,omitempty"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: ToolFail, Description: `Fails on purpose: mode "protocol" (a JSON-RPC error, the default), "tool" (isError) or "exit" (the server process dies mid-call).`,
		InputSchema: json.RawMessage(`{"type":"object","properties":{"mode":{"type":"string","enum":["protocol","tool","exit"],"default":"protocol"}},"additionalProperties":false}`)},
		func(_ context.Context, _ *mcp.CallToolRequest, in failIn) (*mcp.CallToolResult, any, error) {
			switch in.Mode {
			case "tool":
				return nil, nil, errors.New(FailToolText)
			case "exit":
				if !opts.AllowExit {
					return nil, nil, errors.New("testmcp: fail mode \"exit\" is disabled in this server (it is not a process of its own)")
				}
				fmt.Fprintln(os.Stderr, "ccproxy-testmcp: fail mode exit: exiting with status 3")
				os.Exit(3)
			}
			return nil, nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: FailProtocolText}
		})
}

func slow(ctx context.Context, req *mcp.CallToolRequest, d time.Duration) (*mcp.CallToolResult, any, error) {
	start := time.Now()
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	token := req.Params.GetProgressToken()
	for {
		select {
		case <-deadline.C:
			return result(text(fmt.Sprintf("slept %d ms", d.Milliseconds()))), nil, nil
		case <-ctx.Done():
			return nil, nil, fmt.Errorf("slow: cancelled after %d ms: %w", time.Since(start).Milliseconds(), ctx.Err())
		case <-tick.C:
			if token != nil && req.Session != nil {
				_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
					ProgressToken: token, Message: "sleeping",
					Progress: float64(time.Since(start).Milliseconds()), Total: float64(d.Milliseconds()),
				})
			}
		}
	}
}

func echo(in EchoInput) *mcp.CallToolResult {
	msg := in.Message
	switch in.Mode {
	case "upper":
		msg = strings.ToUpper(msg)
	case "reverse":
		r := []rune(msg)
		for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
			r[i], r[j] = r[j], r[i]
		}
		msg = string(r)
	}
	if in.Options != nil && in.Options.Prefix != "" {
		msg = in.Options.Prefix + msg
	}
	n := max(in.Repeat, 1)
	lines := make([]string, n)
	for i := range lines {
		lines[i] = msg
	}
	received, _ := json.Marshal(in) // EchoInput always marshals
	return result(text(strings.Join(lines, "\n")), text("received: "+string(received)))
}

func addResources(s *mcp.Server) {
	s.AddResource(&mcp.Resource{URI: ResourceTextURI, Name: "readme.txt", Title: "Readme", MIMEType: "text/markdown",
		Size: int64(len(ResourceTextBody))},
		func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{
				{URI: ResourceTextURI, MIMEType: "text/markdown", Text: ResourceTextBody}}}, nil
		})
	s.AddResource(&mcp.Resource{URI: ResourceBlobURI, Name: "bytes.bin", MIMEType: "application/octet-stream", Size: 256},
		func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{
				{URI: ResourceBlobURI, MIMEType: "application/octet-stream", Blob: BlobBytes()}}}, nil
		})
}
