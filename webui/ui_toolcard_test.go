package webui_test

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/ccproxy/ccproxy/protocol"
)

// TestWebUIToolImageCard: an MCP tool's image shows at its natural size
// (a 20×20 icon is not blown up), a click or Enter enlarges it in a dialog
// (a click or Esc closes it), the card's text and what its copy button
// copies hold no placeholder of it (neither the proxy's "[image …]" nor the
// CLI's "[Image: source: <its saved copy's path>]"), and the
// saved copy is not asked for (it is the same image; in the demo, recorded
// elsewhere, asking answered 404), in each of uiViews.
func TestWebUIToolImageCard(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	img := image.NewRGBA(image.Rect(0, 0, 20, 20))
	for i := range 20 {
		img.Set(i, i, color.RGBA{200, 30, 30, 255})
	}
	png.Encode(&buf, img)
	const sid = "s-toolimage0001"
	saved := "/home/u/.claude/projects/-home-u-p/30e44b09-d789-4c49-bb02-186482101d23/tool-results/mcp-demo-image-1.png"
	events := []map[string]any{
		{"type": "assistant", "message": map[string]any{"id": "m1", "role": "assistant", "content": []any{
			map[string]any{"type": "tool_use", "id": "toolu_1", "name": "mcp__demo__image", "input": map[string]any{}, "mcp": map[string]any{"server": "demo", "tool": "image"}},
		}}},
		{"type": "user", "message": map[string]any{"role": "user", "content": []any{
			map[string]any{"type": "tool_result", "tool_use_id": "toolu_1", "mcp": map[string]any{"server": "demo", "tool": "image"},
				"content":     "Here is the icon.\n[image image/png 90 B]\n[Image: source: " + saved + "]",
				"attachments": []any{map[string]any{"kind": "image", "mediaType": "image/png", "size": buf.Len(), "sha256": fmt.Sprintf("%064x", 1), "data": base64.StdEncoding.EncodeToString(buf.Bytes())}}},
		}}},
	}
	stub := oneSessionStub(t, sid, "/home/u/p", events, nil)
	b := newBrowser(t)
	b.grantClipboard()
	for i, size := range uiViews {
		// A page load per width, as before; the theme switched in place.
		if i == 0 || size.width != uiViews[i-1].width {
			b.emulate(size.width, size.height, size.dark)
			b.do("open "+size.name, chromedp.Navigate(stub.URL+"/"))
		}
		b.view(size)
		b.until("the tool card's image", `(i => i && i.complete && i.naturalWidth > 0)(document.querySelector(".tool .atts img"))`)
		if w := eval[[]float64](b, `(i => [i.naturalWidth, i.clientWidth, i.clientHeight])(document.querySelector(".tool .atts img"))`); w[0] != 20 || w[1] != 20 || w[2] != 20 {
			t.Errorf("%s: the 20×20 image: natural width %v, shown %v×%v (inside its border); want 20×20", size.name, w[0], w[1], w[2])
		}
		if text := eval[string](b, `document.querySelector(".tool").innerText`); !bytes.Contains([]byte(text), []byte("Here is the icon.")) ||
			bytes.Contains([]byte(text), []byte("[image")) || bytes.Contains([]byte(text), []byte("[Image: source")) || bytes.Contains([]byte(text), []byte(".claude/projects")) {
			t.Errorf("%s: the card's text shows placeholders or the saved copy's path:\n%s", size.name, text)
		}
		if n := eval[int](b, `performance.getEntriesByType("resource").filter(e => e.name.includes("/v1/tool-results/")).length`); n != 0 {
			t.Errorf("%s: %d requests for the saved copy of an image the card shows", size.name, n)
		}
		// The copy button copies what the card shows, not the saved copy's path.
		if got := b.copyAndRead("the card's copy", ".tool button.tool-copy"); !strings.Contains(got, "Here is the icon.") || noInternalPath(got) != "" {
			t.Errorf("%s: the card's copy button copied %q (%s)", size.name, got, noInternalPath(got))
		}
		b.do("enlarge", chromedp.Click(".tool .atts img"))
		b.until("the enlarged image", `!!document.querySelector("dialog.lightbox[open] img")`)
		if w := eval[float64](b, `document.querySelector("dialog.lightbox img").getBoundingClientRect().width`); w < 20 {
			t.Errorf("%s: the enlarged image is %v px wide", size.name, w)
		}
		b.do("close", chromedp.Click("dialog.lightbox"))
		b.until("closed", `!document.querySelector("dialog.lightbox")`)
		// By keyboard: Enter on the focused image opens it, Esc closes it.
		b.do("focus the image", chromedp.Focus(".tool .atts img"))
		b.key(kb.Enter)
		b.until("enlarged by Enter", `!!document.querySelector("dialog.lightbox[open] img")`)
		b.key(kb.Escape)
		b.until("closed by Esc", `!document.querySelector("dialog.lightbox")`)
	}
	b.noJSDialog()
}

// TestWebUIToolAudioCard: the CLI's line for MCP audio it saved ("[Audio
// from S] Binary content (audio/wav, 1.6KB) saved to <path>") shows
// without the path (on the card and in what its copy button copies), with
// a player when the proxy serves the saved file;
// a binary resource whose file the proxy does not have keeps a plain line
// and nothing else; in each of uiViews.
func TestWebUIToolAudioCard(t *testing.T) {
	const sid = "s-toolaudio00001"
	dir := "/tmp/ccproxy-capture/home/.claude/projects/-tmp-p/1f2740f4-ced7-46b5-9c76-ee43175a2520/tool-results/"
	wav := tinyWAV()
	events := []map[string]any{
		{"type": "assistant", "message": map[string]any{"id": "m1", "role": "assistant", "content": []any{
			map[string]any{"type": "tool_use", "id": "toolu_1", "name": "mcp__testmcp__audio", "input": map[string]any{}, "mcp": map[string]any{"server": "testmcp", "tool": "audio"}},
			map[string]any{"type": "tool_use", "id": "toolu_2", "name": "mcp__testmcp__blob", "input": map[string]any{}, "mcp": map[string]any{"server": "testmcp", "tool": "blob"}},
		}}},
		{"type": "user", "message": map[string]any{"role": "user", "content": []any{
			map[string]any{"type": "tool_result", "tool_use_id": "toolu_1", "mcp": map[string]any{"server": "testmcp", "tool": "audio"},
				"content": "[Audio from testmcp] Binary content (audio/wav, 1.6KB) saved to " + dir + "mcp-testmcp-blob-1795223140342-v3zouc.wav"},
		}}},
		{"type": "user", "message": map[string]any{"role": "user", "content": []any{
			map[string]any{"type": "tool_result", "tool_use_id": "toolu_2", "mcp": map[string]any{"server": "testmcp", "tool": "blob"},
				"content": "[Resource from testmcp at testmcp://blobs/bytes.bin] Binary content (application/octet-stream, 256 bytes) saved to " + dir + "mcp-testmcp-blob-1795223140343-gone.bin"},
		}}},
	}
	stub := oneSessionStub(t, sid, "/tmp/p", events, map[string]http.HandlerFunc{
		"/v1/tool-results/1f2740f4-ced7-46b5-9c76-ee43175a2520/mcp-testmcp-blob-1795223140342-v3zouc.wav": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "audio/wav")
			w.Header().Set("Content-Length", fmt.Sprint(len(wav)))
			w.Write(wav)
		},
	})
	b := newBrowser(t)
	b.grantClipboard()
	for i, size := range uiViews {
		if i == 0 || size.width != uiViews[i-1].width {
			b.emulate(size.width, size.height, size.dark)
			b.do("open "+size.name, chromedp.Navigate(stub.URL+"/"))
		}
		b.view(size)
		b.until("the audio player", `document.querySelectorAll(".tool").length === 2 && !!document.querySelector(".tool .atts audio")`)
		texts := eval[[]string](b, `[...document.querySelectorAll(".tool")].map(c => c.innerText)`)
		for i, want := range []string{"Audio from testmcp: audio/wav, 1.6KB", "Resource from testmcp at testmcp://blobs/bytes.bin: application/octet-stream, 256 bytes"} {
			if !strings.Contains(texts[i], want) || strings.Contains(texts[i], "saved to") || strings.Contains(texts[i], "/tmp/") || strings.Contains(texts[i], ".claude/projects") {
				t.Errorf("%s: card %d shows %q; want %q and no path", size.name, i+1, texts[i], want)
			}
		}
		if src := eval[string](b, `document.querySelector(".tool .atts audio").src`); !strings.HasSuffix(src, "/v1/tool-results/1f2740f4-ced7-46b5-9c76-ee43175a2520/mcp-testmcp-blob-1795223140342-v3zouc.wav") {
			t.Errorf("%s: the player plays %q", size.name, src)
		}
		if n := eval[int](b, `document.querySelectorAll(".tool")[1].querySelectorAll(".atts > *").length`); n != 0 {
			t.Errorf("%s: the resource whose file is gone shows %d parts besides its line", size.name, n)
		}
		if got := b.copyAndRead("the audio card's copy", ".tool button.tool-copy"); !strings.Contains(got, "Audio from testmcp: audio/wav, 1.6KB") || noInternalPath(got) != "" {
			t.Errorf("%s: the audio card's copy button copied %q (%s)", size.name, got, noInternalPath(got))
		}
	}
}

// pngFile writes a w×h PNG to path and returns path.
func pngFile(t *testing.T, path string, w, h int) string {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewRGBA(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// noInternalPath says which internal part text carries (a path under
// .claude/projects, the CLI's "[Image: source" or "saved to /"), or "".
func noInternalPath(text string) string {
	for _, bad := range []string{".claude/projects", "[Image: source", "saved to /"} {
		if strings.Contains(text, bad) {
			return "has " + bad
		}
	}
	return ""
}

// tinyWAV is a valid WAV file: 8 kHz mono 8-bit, 80 samples of silence.
func tinyWAV() []byte {
	data := bytes.Repeat([]byte{128}, 80)
	var b bytes.Buffer
	le := func(v any) { binary.Write(&b, binary.LittleEndian, v) }
	b.WriteString("RIFF")
	le(uint32(36 + len(data)))
	b.WriteString("WAVEfmt ")
	le(uint32(16))
	le(uint16(1))
	le(uint16(1))
	le(uint32(8000))
	le(uint32(8000))
	le(uint16(1))
	le(uint16(8))
	b.WriteString("data")
	le(uint32(len(data)))
	b.Write(data)
	return b.Bytes()
}

// oneSessionStub is a stub backend with one idle session, sid in cwd,
// whose subscription replays events (seq 1…), serving files as
// stubBackendFiles does (nil: none).
func oneSessionStub(t *testing.T, sid, cwd string, events []map[string]any, files map[string]http.HandlerFunc) *httptest.Server {
	t.Helper()
	var pushes []stubPush
	for i, ev := range events {
		raw, _ := json.Marshal(ev)
		pushes = append(pushes, stubPush{protocol.TypeSessionEvent, protocol.SessionEvent{Session: sid, Seq: int64(i + 1), Event: raw}})
	}
	return stubBackendFiles(t, []string{protocol.CapSessions}, func(f *protocol.Frame) (protocol.Data, []stubPush) {
		switch {
		case f == nil:
		case f.Type == protocol.TypeSessionList:
			return protocol.SessionListResult{Sessions: []protocol.SessionInfo{{Session: sid, State: "idle", Cwd: cwd, FirstSeq: 1, PermissionMode: "default"}}}, nil
		case f.Type == protocol.TypeSessionSubscribe:
			return subscribed(f, "idle"), pushes
		}
		return nil, nil
	}, files)
}
