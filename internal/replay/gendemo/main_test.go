package main

import (
	"bytes"
	"os"
	"testing"
)

// The committed demo transcript is what gendemo makes of the committed
// capture: nobody edited it by hand, and a new capture was rewritten.
func TestCommittedDemo(t *testing.T) {
	capture, err := os.ReadFile("../" + defaultIn)
	if err != nil {
		t.Fatal(err)
	}
	committed, err := os.ReadFile("../" + defaultOut)
	if err != nil {
		t.Fatal(err)
	}
	want, err := rewrite(capture)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(committed, want) {
		t.Error("internal/replay/transcripts/demo.jsonl is not what gendemo makes of the capture: run go generate ./internal/replay")
	}
	again, err := rewrite(want)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again, want) {
		t.Error("a second rewrite changes the demo: the rules are not idempotent")
	}
}

func TestRewrite(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"untouched bytes stay", `{"b": 1, "a":"x\u00e9<>"}` + "\n", `{"b": 1, "a":"x\u00e9<>"}` + "\n"},
		{"servers and tools",
			`{"tools":["Bash","mcp__everything__echo","mcp__testmcp__image"],"mcp_servers":[{"name":"everything","status":"connected"},{"name":"testmcp","status":"connected"}]}`,
			`{"tools":["Bash","mcp__demo__echo"],"mcp_servers":[{"name":"demo","status":"connected"}]}`},
		{"models", `{"models":[{"value":"default","resolvedModel":"a"},{"value":"fable","resolvedModel":"b"},{"value":"haiku","resolvedModel":"c"}]}`,
			`{"models":[{"value":"default","resolvedModel":"a"},{"value":"haiku","resolvedModel":"c"}]}`},
		{"words", `{"text":"Everything the everything server & everythings <b>: everything:x, mcp-servers/everything"}`,
			`{"text":"Everything the demo server & everythings <b>: demo:x, mcp-servers/demo"}`},
		{"command path", `{"command":"/x/y/node_modules/.bin/mcp-server-everything","args":[]}`, `{"command":"mcp-server-demo","args":[]}`},
		{"empty lines", "{}\n\n[]\n", "{}\n\n[]\n"},
	} {
		got, err := rewrite([]byte(c.in))
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if string(got) != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
	}
	if _, err := rewrite([]byte("{\"a\":\n")); err == nil {
		t.Error("a broken line was taken")
	}
}
