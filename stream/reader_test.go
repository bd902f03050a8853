package stream

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// readAll returns every line a Reader yields, copied.
func readAll(t *testing.T, r *Reader) ([]string, error) {
	t.Helper()
	var out []string
	for {
		line, err := r.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return out, err
		}
		out = append(out, string(line))
	}
}

func TestReaderLines(t *testing.T) {
	tests := []struct {
		name string
		in   string
		max  int
		want []string
	}{
		{"simple", "{\"a\":1}\n{\"b\":2}\n", 0, []string{`{"a":1}`, `{"b":2}`}},
		{"crlf", "{\"a\":1}\r\n{\"b\":2}\r\n", 0, []string{`{"a":1}`, `{"b":2}`}},
		{"blank lines", "\n\n{\"a\":1}\n \t\r\n\n{\"b\":2}\n\n", 0, []string{`{"a":1}`, `{"b":2}`}},
		{"no final newline", "{\"a\":1}\n{\"b\":2}", 0, []string{`{"a":1}`, `{"b":2}`}},
		{"empty input", "", 0, nil},
		{"only blanks", "\n\r\n  \n", 0, nil},
		{"exactly the cap", "12345\n123456\n", 5, []string{"12345",
			`{"type":"ccproxy","subtype":"oversized_line","bytes":6,"limit":5,"preview":"123456"}`}},
		{"oversized then normal", strings.Repeat("x", 300) + "\n{\"ok\":true}\n", 100, []string{
			`{"type":"ccproxy","subtype":"oversized_line","bytes":300,"limit":100,"preview":"` + strings.Repeat("x", 256) + `"}`,
			`{"ok":true}`}},
		{"oversized last line without newline", "{}\n" + strings.Repeat("y", 50), 10, []string{"{}",
			`{"type":"ccproxy","subtype":"oversized_line","bytes":50,"limit":10,"preview":"` + strings.Repeat("y", 50) + `"}`}},
		{"long line under the cap", strings.Repeat("z", 200000) + "\n", 0, []string{strings.Repeat("z", 200000)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := readAll(t, NewReader(strings.NewReader(tt.in), tt.max))
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") || len(got) != len(tt.want) {
				t.Errorf("lines:\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestReaderOversizedPreviewIsValidUTF8(t *testing.T) {
	// 255 ASCII bytes then a 3-byte character straddling the 256-byte cut.
	line := strings.Repeat("a", 255) + "€€€" + strings.Repeat("b", 100)
	got, err := readAll(t, NewReader(strings.NewReader(line+"\n"), 10))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || !gjson.Valid(got[0]) {
		t.Fatalf("want one valid event, got %q", got)
	}
	preview := gjson.Get(got[0], "preview").Str
	if preview != strings.Repeat("a", 255) {
		t.Errorf("preview must stop before the split character, got %q", preview)
	}
}

// errReader returns some data, then an error.
type errReader struct {
	data []byte
	err  error
}

func (r *errReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, r.err
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

func TestReaderErrorAfterLines(t *testing.T) {
	boom := errors.New("pipe broke")
	r := NewReader(&errReader{data: []byte("{\"a\":1}\n{\"b\""), err: boom}, 0)
	got, err := readAll(t, r)
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want %v", err, boom)
	}
	if len(got) != 2 || got[0] != `{"a":1}` || got[1] != `{"b"` {
		t.Errorf("lines before the error: %q", got)
	}
	if _, err := r.Next(); !errors.Is(err, boom) {
		t.Errorf("error must be sticky, got %v", err)
	}
}

// patternReader yields n bytes of a repeated pattern without holding them.
type patternReader struct {
	pattern []byte
	n       int64
	off     int
}

func (r *patternReader) Read(p []byte) (int, error) {
	if r.n <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > r.n {
		p = p[:r.n]
	}
	for i := range p {
		p[i] = r.pattern[r.off]
		r.off = (r.off + 1) % len(r.pattern)
	}
	r.n -= int64(len(p))
	return len(p), nil
}

// TestReader100MBLine streams a 100 MB line followed by normal lines through
// a Reader with the default 64 MiB cap: the oversized event comes first, then
// the normal events, and the Reader never holds more than the cap.
func TestReader100MBLine(t *testing.T) {
	if testing.Short() {
		t.Skip("100 MB stream in -short mode")
	}
	const size = 100 << 20
	big := &patternReader{pattern: []byte(`{"type":"user","data":"` + strings.Repeat("QUJD", 64)), n: size}
	in := io.MultiReader(big, strings.NewReader("\n{\"type\":\"system\",\"subtype\":\"status\"}\n{\"type\":\"result\"}\n"))

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	got, err := readAll(t, NewReader(in, 0))
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("want 3 events, got %d", len(got))
	}
	if gjson.Get(got[0], "subtype").Str != "oversized_line" || gjson.Get(got[0], "bytes").Int() != size {
		t.Errorf("first event: %.200s", got[0])
	}
	if !strings.HasPrefix(gjson.Get(got[0], "preview").Str, `{"type":"user","data":"QUJD`) {
		t.Errorf("preview: %.100s", gjson.Get(got[0], "preview").Str)
	}
	if got[1] != `{"type":"system","subtype":"status"}` || got[2] != `{"type":"result"}` {
		t.Errorf("normal events after the oversized one: %q", got[1:])
	}
	// The line is read in pieces up to the cap, then dropped without being
	// copied: all allocations (so the peak too) add up to at most the cap
	// plus one piece.
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > DefaultMaxLine+chunkMax {
		t.Errorf("reading allocated %d MiB in all, want at most the 64 MiB cap + 16 MiB", alloc>>20)
	}
}

// TestReaderLongLines reads long lines (in pieces, or in a buffer sized
// from the last long line) and checks their bytes and that their buffers
// are not much larger than they are.
func TestReaderLongLines(t *testing.T) {
	var in strings.Builder
	var want []string
	for i, n := range []int{retainBytes - 1, retainBytes + 1, 3<<20 + 7, 20<<20 + 3, 5 << 20, 40<<20 + 1} {
		line := strings.Repeat(fmt.Sprintf("%07d,", i*1000003), n/8+1)[:n]
		want = append(want, line)
		in.WriteString(line + "\n{}\n")
	}
	r := NewReader(strings.NewReader(in.String()), 0)
	for i, w := range want {
		line, err := r.Next()
		if err != nil || string(line) != w {
			t.Fatalf("line %d: %d bytes (want %d), %v", i, len(line), len(w), err)
		}
		// A buffer sized for the line (its length, or from the last long
		// line but at most 8 times what was read) comes from a pool whose
		// sizes are at most an eighth larger than asked (bigbuf.go).
		if want := max(len(w)+len(w)/8+1, 8*(retainBytes+64<<10)); len(w) > retainBytes && cap(line) > want+want/8 {
			t.Errorf("line %d of %d bytes in a buffer of %d", i, len(w), cap(line))
		}
		if line, err := r.Next(); err != nil || string(line) != "{}" {
			t.Fatalf("after line %d: %q, %v", i, line, err)
		}
	}
}

// TestReaderDrainAllocatesLittle: with a small cap, a huge line costs almost
// no memory at all.
func TestReaderDrainAllocatesLittle(t *testing.T) {
	in := io.MultiReader(&patternReader{pattern: []byte("0123456789"), n: 50 << 20}, strings.NewReader("\n{}\n"))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	got, err := readAll(t, NewReader(in, 1<<20))
	runtime.ReadMemStats(&after)
	if err != nil || len(got) != 2 || got[1] != "{}" {
		t.Fatalf("got %d lines, err %v", len(got), err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 4<<20 {
		t.Errorf("draining a 50 MiB line with a 1 MiB cap allocated %d KiB", alloc>>10)
	}
}

func TestReaderBuffers(t *testing.T) {
	big := strings.Repeat("a", 3<<20) + "\n"
	in := strings.NewReader("{}\n" + big + "{}\n" + big + "{}\n")
	r := NewReader(in, 0)
	next := func() string {
		t.Helper()
		line, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		return string(line)
	}
	next()
	base := cap(r.line)
	next() // the first big line grows
	next()
	if cap(r.line) > retainBytes {
		t.Errorf("a %d-byte buffer was kept after a huge line", cap(r.line))
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	line, err := r.Next()
	runtime.ReadMemStats(&after)
	if err != nil || len(line) != 3<<20 {
		t.Fatalf("big line of %d bytes, %v", len(line), err)
	}
	// The second big line is sized from the first: one allocation of
	// about its size, not a doubling chain (which adds up to twice more).
	if got := after.TotalAlloc - before.TotalAlloc; got > (3<<20)*5/4+64<<10 {
		t.Errorf("a repeated big line allocated %d KiB, want about %d KiB", got>>10, (3<<20)>>10)
	}
	next()
	if cap(r.line) < base || cap(r.line) > retainBytes {
		t.Errorf("after a big line the base buffer (%d) should be back, got %d", base, cap(r.line))
	}
}

// After one huge line, a later long line is not given a buffer of the huge
// line's size.
func TestReaderHintIsBounded(t *testing.T) {
	huge := strings.Repeat("h", 40<<20) + "\n"
	long := strings.Repeat("l", 2<<20) + "\n"
	r := NewReader(strings.NewReader(huge+"{}\n"+long), 0)
	for range 2 {
		if _, err := r.Next(); err != nil {
			t.Fatal(err)
		}
	}
	if line, err := r.Next(); err != nil || len(line) != 2<<20 {
		t.Fatalf("long line: %d bytes, %v", len(line), err)
	}
	if c := cap(r.line); c > 16<<20 {
		t.Errorf("a 2 MiB line after a 40 MiB one got a %d MiB buffer", c>>20)
	}
}

func TestReaderLineNumbers(t *testing.T) {
	r := NewReader(strings.NewReader("{}\n\n  \n{\"a\":1}\r\nlast"), 0)
	var got []int
	for {
		if _, err := r.Next(); err != nil {
			break
		}
		got = append(got, r.Line())
	}
	if fmt.Sprint(got) != "[1 4 5]" {
		t.Errorf("line numbers %v, want [1 4 5]", got)
	}
}

// TestReaderLongLinePeakMemory reads a line just under the 64 MiB cap in a
// child process and checks the child's peak resident memory: the line is
// held about once while it is completed (each piece given back to the
// system once it is copied into the joined line), not twice (all the
// pieces alive next to the joined copy).
func TestReaderLongLinePeakMemory(t *testing.T) {
	const size = DefaultMaxLine - 1
	if os.Getenv("STREAM_PEAK_CHILD") == "1" {
		base := peakRSSKiB(t)
		in := io.MultiReader(&patternReader{pattern: []byte("0123456789abcdef"), n: size}, strings.NewReader("\n"))
		line, err := NewReader(in, 0).Next()
		if err != nil || len(line) != size || string(line[size-16:]) != "f0123456789abcde" {
			t.Fatalf("line of %d bytes, %v", len(line), err)
		}
		fmt.Printf("peak_kib=%d base_kib=%d\n", peakRSSKiB(t), base)
		return
	}
	if runtime.GOOS != "linux" || !piecesMapped || raceEnabled || testing.Short() {
		t.Skip("peak memory is read from /proc on linux, without the race detector, not in -short mode")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^TestReaderLongLinePeakMemory$")
	cmd.Env = append(os.Environ(), "STREAM_PEAK_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	var peak, base int
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, "peak_kib=") {
			if _, err := fmt.Sscanf(l, "peak_kib=%d base_kib=%d", &peak, &base); err != nil {
				t.Fatalf("child said %q: %v", l, err)
			}
		}
	}
	if peak == 0 {
		t.Fatalf("child did not report its peak:\n%s", out)
	}
	grew := (peak - base) << 10
	t.Logf("a %d MiB line: peak RSS grew by %d MiB", size>>20, grew>>20)
	if limit := size + chunkMax + 8<<20; grew > limit {
		t.Errorf("reading a %d MiB line raised peak RSS by %d MiB, want at most the line + one %d MiB piece + 8 MiB (%d MiB)",
			size>>20, grew>>20, chunkMax>>20, limit>>20)
	}
}

// peakRSSKiB returns this process's peak resident memory (VmHWM) in KiB.
func peakRSSKiB(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			var kib int
			if _, err := fmt.Sscanf(strings.TrimSpace(rest), "%d kB", &kib); err != nil {
				t.Fatalf("VmHWM %q: %v", rest, err)
			}
			return kib
		}
	}
	t.Fatal("no VmHWM in /proc/self/status")
	return 0
}
