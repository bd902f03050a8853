package acp

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"
)

// Malformed input gets the standard JSON-RPC errors (with the request's id
// when it is a string or a number, else null) and never reaches the SDK:
// ids of other types or null, a jsonrpc other than "2.0", a prompt block
// of an unknown type (named with its index); well-formed messages pass in
// order; a line over the limit is drained and answered with its id, and
// the next line still works.
func TestGuard(t *testing.T) {
	big := `{"jsonrpc":"2.0","id":9,"method":"x","params":"` + strings.Repeat("a", MaxLineBytes) + `"}`
	in := strings.Join([]string{
		`not json`,
		`[{"jsonrpc":"2.0","id":1,"method":"initialize"}]`,
		`{"jsonrpc":"2.0"}`,
		`{"jsonrpc":"2.0","id":2,"method":7}`,
		`{"jsonrpc":"2.0","id":"a-1","method":false}`,
		`{"jsonrpc":"2.0","id":{"x":1},"method":[]}`,
		`  `,
		`{"jsonrpc":"2.0","id":3,"method":"initialize","params":{}}`,
		big,
		`{"jsonrpc":"2.0","id":true,"method":"initialize"}`,
		`{"jsonrpc":"2.0","id":null,"method":"initialize"}`,
		`{"id":4,"method":"initialize","params":{}}`,
		`{"jsonrpc":"1.0","id":"b","method":"initialize","params":{}}`,
		`{"jsonrpc":"2.0","id":5,"method":"session/prompt","params":{"sessionId":"s","prompt":[{"type":"text","text":"hi"},{"type":"video","data":"x"}]}}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"the editor could not read a request"}}`,
		`{"jsonrpc":"2.0","id":6,"method":"initialize","error":{}}`,
		`{"jsonrpc":"2.0","method":"session/prompt","params":{"sessionId":"s","prompt":[]}}`,
		`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}`,
	}, "\n")
	var out bytes.Buffer
	pr, pw := io.Pipe()
	passed := make(chan string, 1)
	go func() { b, _ := io.ReadAll(pr); passed <- string(b) }()
	guard(strings.NewReader(in), pw, &out, slog.New(slog.DiscardHandler), (&Agent{}).order)
	got := <-passed
	want := `{"jsonrpc":"2.0","id":3,"method":"initialize","params":{}}` + "\n" +
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"the editor could not read a request"}}` + "\n" + // a response: never answered
		`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}` + "\n"
	if got != want {
		t.Errorf("passed to the SDK:\n%.300s\nwant:\n%s", got, want)
	}
	var codes []int
	wantIDs := []string{"null", "null", "null", "2", `"a-1"`, "null", "9", "null", "null", "4", `"b"`, "5", "6", "null"} // the id of a request that has one, else null
	for i, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var m struct {
			ID    json.RawMessage `json:"id"`
			Error struct {
				Code int `json:"code"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(l), &m); err != nil || i >= len(wantIDs) || string(m.ID) != wantIDs[i] {
			t.Fatalf("answer %d %q: %v (want id %s)", i, l, err, wantIDs[min(i, len(wantIDs)-1)])
		}
		codes = append(codes, m.Error.Code)
	}
	for _, w := range []string{`message over 10485760 bytes`, `id must be a string or a number`, `jsonrpc must be \"2.0\"`, `prompt[1]: unknown content block type \"video\"`} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("no answer says %s:\n%s", w, out.String())
		}
	}
	if want := []int{-32700, -32600, -32600, -32600, -32600, -32600, -32600, -32600, -32600, -32600, -32600, -32602, -32600, -32600}; !equalInts(codes, want) {
		t.Errorf("error codes %v, want %v", codes, want)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// The guard's bound is the SDK's: a message of MaxLineBytes with its
// newline passes, one byte more is refused (the SDK would end the whole
// connection on it).
func TestGuardLineBound(t *testing.T) {
	line := func(n int) string { // a message of n bytes
		head := `{"jsonrpc":"2.0","method":"x","params":"`
		return head + strings.Repeat("a", n-len(head)-2) + `"}`
	}
	for _, c := range []struct {
		n      int
		passed bool
	}{{MaxLineBytes - 1, true}, {MaxLineBytes, false}} {
		var out bytes.Buffer
		pr, pw := io.Pipe()
		passed := make(chan int, 1)
		go func() { b, _ := io.ReadAll(pr); passed <- len(b) }()
		guard(strings.NewReader(line(c.n)+"\n"), pw, &out, slog.New(slog.DiscardHandler), nil)
		if got := <-passed > 0; got != c.passed || got == (out.Len() > 0) {
			t.Errorf("a message of %d bytes: passed %v (answered %.80q), want passed %v", c.n, got, out.String(), c.passed)
		}
	}
}
