package slashcmd

import (
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/ccproxy/ccproxy/protocol"
)

func TestNote(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	var pushed [][]byte
	push := func(f []byte) { pushed = append(pushed, f) }
	var l List
	if l.Frames() != nil {
		t.Fatal("frames before any list")
	}
	arr := `[{"name":"compact","description":"Compact","argumentHint":"<hint>","aliases":["c","bad\u0001"]},{"name":""},{"name":7}]`
	l.Note("s1", gjson.Parse(arr), log, push)
	if len(pushed) != 1 {
		t.Fatalf("pushes: %d, want 1", len(pushed))
	}
	f, err := protocol.ParseFrame(pushed[0])
	if err != nil || f.Type != protocol.TypeSessionCommands {
		t.Fatalf("push %s: %v", pushed[0], err)
	}
	if !strings.Contains(string(f.Data), `"aliases":["c"]`) || strings.Contains(string(f.Data), `"name":""`) {
		t.Fatalf("push data %s: want compact with alias c only", f.Data)
	}
	l.Note("s1", gjson.Parse(arr), log, push)  // the same list: no push
	l.Note("s1", gjson.Parse(`[]`), log, push) // empty: keeps what is known
	l.Note("s1", gjson.Parse(`{}`), log, push) // not an array
	if len(pushed) != 1 || len(l.Frames()) != 1 {
		t.Fatalf("pushes %d frames %d, want 1 and 1", len(pushed), len(l.Frames()))
	}
	l.Note("s1", gjson.Parse(`[{"name":"other"}]`), log, push)
	if len(pushed) != 2 || string(l.Frames()[0]) != string(pushed[1]) {
		t.Fatal("a changed list is pushed and kept")
	}
}

func TestParseBounds(t *testing.T) {
	var b strings.Builder
	b.WriteString("[")
	for i := range protocol.MaxCommands + 3 {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`{"name":"c` + strings.Repeat("x", i%5) + `"}`)
	}
	b.WriteString("]")
	list, offered, ok := Parse(gjson.Parse(b.String()))
	if !ok || offered != protocol.MaxCommands+3 || len(list) != protocol.MaxCommands {
		t.Fatalf("ok %v offered %d kept %d", ok, offered, len(list))
	}
	if _, _, ok := Parse(gjson.Parse(`"x"`)); ok {
		t.Fatal("a string is not a list")
	}
}
