package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestBadArguments(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"extra"}, `unexpected arguments ["extra"]`},
		{[]string{"-nope"}, "flag provided but not defined"},
		{[]string{"-claude", "/bin/true", "-everything", "/bin/true", "-testmcp", "/bin/true", "-only", "nosuch"},
			`no scenario "nosuch" (there are testmcp_tools, testmcp_large, everything_tools, partial_messages_mcp)`},
	} {
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), tt.args, &stdout, &stderr)
		if err == nil || !strings.Contains(err.Error()+stderr.String(), tt.want) {
			t.Errorf("%v: err %v (stderr %q), want %q", tt.args, err, stderr.String(), tt.want)
		}
	}
}
