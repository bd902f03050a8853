package fakeapi

import (
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"
)

// A Responder decides the reply to one Messages request. It returns nil when
// it has nothing to say, and the server then answers with its fallback (a
// short text), so the CLI never hangs on a request nobody scripted (title
// generation, side queries). Responders may be called concurrently.
type Responder func(req *Request) *Reply

// First tries the responders in order and returns the first non-nil reply.
func First(rs ...Responder) Responder {
	return func(req *Request) *Reply {
		for _, r := range rs {
			if r == nil {
				continue
			}
			if rep := r(req); rep != nil {
				return rep
			}
		}
		return nil
	}
}

// OnText answers a prompt containing keyword: the first step is answered when
// the prompt arrives, the second when the results of the first come back, and
// so on (see Request.Step). Once the steps are used up it returns nil, so a
// later responder (typically OnToolResults) can finish the exchange. Only
// requests that offer tools are considered: side requests of the CLI (title
// generation and the like) fall through.
//
//	fakeapi.OnText("IMAGE", fakeapi.CallTool("mcp__testmcp__image", nil))
func OnText(keyword string, steps ...*Reply) Responder {
	return func(req *Request) *Reply {
		if !req.HasTools() || !strings.Contains(req.Prompt(), keyword) {
			return nil
		}
		if s := req.Step(); s < len(steps) {
			return steps[s]
		}
		return nil
	}
}

// OnToolResults answers requests whose last user message carries tool
// results, with f's reply.
func OnToolResults(f func(req *Request, results []ToolResult) *Reply) Responder {
	return func(req *Request) *Reply {
		results := req.ToolResults()
		if len(results) == 0 {
			return nil
		}
		return f(req, results)
	}
}

// Summarize answers tool results with one text block that describes each
// result: its tool, whether it failed, how many text parts and images it had,
// and the start of its text. It is deterministic, so captures are stable.
func Summarize(_ *Request, results []ToolResult) *Reply {
	var b strings.Builder
	fmt.Fprintf(&b, "Got %d tool result(s).", len(results))
	for _, r := range results {
		name := r.ToolName
		if name == "" {
			name = r.ToolUseID
		}
		status := "ok"
		if r.IsError {
			status = "error"
		}
		texts := 0
		for _, bl := range r.Blocks {
			if bl.Type == "text" {
				texts++
			}
		}
		fmt.Fprintf(&b, "\n- %s (%s): %d text part(s), %d image(s), %d bytes of text", name, status, texts, r.Images(), len(r.Text))
		if r.Text != "" {
			fmt.Fprintf(&b, ", starting %q", clip(r.Text, 80))
		}
	}
	return Say(b.String())
}

// clip returns at most n runes of s.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i := 0
	for j := range s {
		if i == n {
			return s[:j] + "…"
		}
		i++
	}
	return s
}

// Sequence answers the main-loop requests (those that offer tools) with the
// replies in order, one each; requests without tools fall through, and so do
// requests after the last reply.
func Sequence(replies ...*Reply) Responder {
	var mu sync.Mutex
	next := 0
	return func(req *Request) *Reply {
		if !req.HasTools() {
			return nil
		}
		mu.Lock()
		defer mu.Unlock()
		if next >= len(replies) {
			return nil
		}
		next++
		return replies[next-1]
	}
}

// Match answers with reply whenever pred holds.
func Match(pred func(req *Request) bool, reply *Reply) Responder {
	return func(req *Request) *Reply {
		if pred(req) {
			return reply
		}
		return nil
	}
}
