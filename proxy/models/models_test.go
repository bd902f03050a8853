package models

import (
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/ccproxy/ccproxy/protocol"
	"github.com/ccproxy/ccproxy/stream"
)

// The models of claude's initialize reply are kept within their bounds;
// system/init's model is the session's unless it is what the chosen value
// resolves to; Choose makes the chosen value the session's model.
func TestState(t *testing.T) {
	m := Start("")
	long := strings.Repeat("é", protocol.MaxModelDisplayNameBytes) // 2 bytes each
	reply := `{"models":[{"value":"default","displayName":"` + long + `","resolvedModel":"claude-x-1"},{"value":"bad\u0001value"},{"value":"opus","description":"a\nb","resolvedModel":"claude-opus-9"}]}`
	if !m.NoteList([]byte(reply), slog.New(slog.DiscardHandler)) || m.Gen() != 1 {
		t.Fatalf("NoteList: no change, gen %d", m.Gen())
	}
	infos := m.Infos()
	if len(infos) != 2 || infos[0].Value != "default" || infos[1].Value != "opus" || infos[1].Description != "a b" {
		t.Fatalf("infos %+v", infos)
	}
	if n := len(infos[0].DisplayName); n > protocol.MaxModelDisplayNameBytes || n < protocol.MaxModelDisplayNameBytes-1 {
		t.Errorf("display name cut to %d bytes", n)
	}
	if m.NoteList([]byte(reply), slog.New(slog.DiscardHandler)) || m.NoteList([]byte(`{}`), slog.New(slog.DiscardHandler)) {
		t.Error("the same list, or none, changed the models")
	}
	init := func(model string) bool {
		ev := stream.NewNormalizer(stream.Options{}).Normalize([]byte(`{"type":"system","subtype":"init","model":"` + model + `"}`))
		return m.NoteInit(&ev)
	}
	// Nothing chosen: "default" stands for what it resolves to.
	if !init("claude-x-1") || m.Current() != "default" {
		t.Errorf("current %q, want default", m.Current())
	}
	if !m.Choose("opus", "") || m.Current() != "opus" || m.Chosen() != "opus" {
		t.Errorf("after Choose: current %q, chosen %q", m.Current(), m.Chosen())
	}
	if init("claude-opus-9") || m.Current() != "opus" {
		t.Errorf("init with opus's id: current %q, want opus", m.Current())
	}
	if !init("claude-other") || m.Current() != "claude-other" {
		t.Errorf("init with another model: current %q", m.Current())
	}
	if ValidValue("") || ValidValue("a\u0001") || !ValidValue("claude-x-1") {
		t.Error("ValidValue")
	}
}

// A model value that reads as a flag goes as --model=V.
func TestArgs(t *testing.T) {
	for model, want := range map[string][]string{
		"":         nil,
		"sonnet":   {"--model", "sonnet"},
		"-rf":      {"--model=-rf"},
		"opus[1m]": {"--model", "opus[1m]"},
	} {
		if got := Args(model); !slices.Equal(got, want) {
			t.Errorf("Args(%q) = %q, want %q", model, got, want)
		}
	}
}
