package stream

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tidwall/gjson"
)

// FuzzNormalize feeds arbitrary bytes through a Reader (with a small cap, so
// oversized lines happen) and a Normalizer, and checks that nothing panics,
// every output is one valid JSON object in valid UTF-8 on one line, and
// normalizing the output again changes nothing.
func FuzzNormalize(f *testing.F) {
	// Seeds are single lines and short runs of lines (an init, a tool_use,
	// its result): small inputs keep the fuzzer fast and its minimizer
	// from stalling on whole transcripts.
	for _, rel := range transcripts(f) {
		lines := bytes.Split(readTranscript(f, rel), []byte("\n"))
		for i, line := range lines {
			if len(line) <= 16<<10 {
				f.Add(line)
			}
			if i+3 <= len(lines) {
				if run := bytes.Join(lines[i:i+3], []byte("\n")); len(run) <= 16<<10 {
					f.Add(run)
				}
			}
		}
	}
	f.Add([]byte("noise\n{\"type\":\"user\"}\r\n\n\xff\xfe{"))
	f.Add([]byte(`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"a","content":[{"type":"image","source":{"data":"aGk="}},{"type":"resource","resource":{"blob":"!!"}},7,null]}]},"tool_use_result":[{"type":"x"}]}`))

	f.Fuzz(func(t *testing.T, in []byte) {
		for _, eng := range engines {
			for _, mode := range []AttachmentMode{AttachInline, AttachStrip} {
				opts := Options{Attachments: mode, MaxToolIDs: 8}
				once := normalizeLines(t, in, eng.new(opts), 4096)
				if pieces := normalizeToLines(t, in, eng.new(opts), 4096); !equalLines(pieces, once) {
					t.Fatalf("%s: NormalizeTo and Normalize disagree (mode %v) on %q", eng.name, mode, in)
				}
				for _, line := range once {
					if len(line) == 0 || line[0] != '{' || !json.Valid(line) {
						t.Fatalf("%s: output is not a JSON object: %q", eng.name, line)
					}
					if !utf8.Valid(line) {
						t.Fatalf("%s: output is not valid UTF-8: %q", eng.name, line)
					}
					if bytes.ContainsAny(line, "\n\r") {
						t.Fatalf("%s: output spans lines: %q", eng.name, line)
					}
				}
				n := eng.new(opts)
				for i, line := range once {
					if again := n.Normalize(line).JSON; !bytes.Equal(again, line) {
						t.Fatalf("%s: not idempotent (mode %v, line %d):\n once: %q\ntwice: %q", eng.name, mode, i, line, again)
					}
				}
				// Both engines give the same output.
				if eng.name != engines[0].name {
					if direct := normalizeLines(t, in, engines[0].new(opts), 4096); !equalLines(direct, once) {
						t.Fatalf("engines disagree (mode %v) on %q", mode, in)
					}
				}
			}
		}
	})
}

func equalLines(a, b [][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

// FuzzAppendJSONString checks the escaping appender against
// gjson.AppendJSONString, byte for byte.
func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "plain ascii text, long enough for words", "a\"b\\c<d>e&f\x00\x1f\x7f",
		"\u2028\u2029 é ü 日本語 🎉", "\xff\xfe broken \xe2\x80", "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
		"tab\there\nnewline\r\b\f", "12345678<2345678&"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		prefix := []byte("x")
		if got, want := appendJSONString(prefix, s), gjson.AppendJSONString([]byte("x"), s); !bytes.Equal(got, want) {
			t.Fatalf("appendJSONString(%q) = %q, gjson gives %q", s, got, want)
		}
	})
}

// FuzzHashBase64 checks that hashing base64 a block at a time gives what
// decoding it whole gives, into blocks or into one buffer (whose bytes are
// then decode's), and gives up exactly where decoding fails (or on line
// breaks, which decode handles).
func FuzzHashBase64(f *testing.F) {
	big := make([]byte, 200_003)
	for i := range big {
		big[i] = byte(i * 7919 >> 3)
	}
	std := base64.StdEncoding.EncodeToString(big)
	for _, s := range []string{"", "aGk=", "aGk", "aGk=aGk=", "!!!!", "aG\nk=", std, std[:len(std)-1], base64.RawStdEncoding.EncodeToString(big),
		std[:hashBlock] + "=" + std[hashBlock+1:], std[:hashBlock-1] + "=" + std[hashBlock:], "aGk=" + std} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n := NewNormalizer(Options{})
		size, sum, ok := n.hashBase64(s, nil)
		dst := make([]byte, base64.StdEncoding.DecodedLen(len(s))+3)
		size2, sum2, ok2 := n.hashBase64(s, dst)
		if size2 != size || sum2 != sum || ok2 != ok {
			t.Fatalf("hashBase64(%.100q) into a buffer: %d %x %v, into blocks: %d %x %v", s, size2, sum2, ok2, size, sum, ok)
		}
		dec, err := n.decode(s)
		if ok && !bytes.Equal(dst[:size], dec) {
			t.Fatalf("hashBase64(%.100q) decoded other bytes than decode", s)
		}
		if !ok {
			if err == nil && !strings.ContainsAny(s, "\r\n") {
				t.Fatalf("hashBase64 gave up on %.100q (%d bytes) which decodes", s, len(s))
			}
			return
		}
		if err != nil {
			t.Fatalf("hashBase64 accepted %.100q (%d bytes), decode says %v", s, len(s), err)
		}
		if size != len(dec) || sum != sha256.Sum256(dec) {
			t.Fatalf("hashBase64(%.100q): size %d, decode %d; sums differ: %v", s, size, len(dec), sum != sha256.Sum256(dec))
		}
	})
}

// FuzzAppendTextToken checks that reading a JSON string token straight
// into its escaped text gives what unescaping it (gjson) and escaping it
// again (gjson.AppendJSONString) gives, whenever it accepts the token, and
// that it accepts every token without escaped surrogates.
func FuzzAppendTextToken(f *testing.F) {
	for _, s := range []string{`plain`, `a\nb\tc\"d\\e\bf\fg\rh`, `\u00e9`, `\/`, `<b>&`, "\u2028", "é ü 日本", `line one\nline two with quite a few words in it`,
		`\u003c\u003E\u0026\u0008\u001f\u2029\u0041`, `\ud83d\ude00`, `x<y and y>z & so on, long enough for words`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		tok := `"` + body + `"`
		if !utf8.ValidString(body) || !gjson.Valid(tok) || gjson.Parse(tok).Type != gjson.String {
			return
		}
		got, end, ok := appendTextToken([]byte("x"), tok+"}", 0)
		if !ok {
			if string(got) != "x" {
				t.Fatalf("appendTextToken(%q) refused but wrote %q", tok, got)
			}
			if !strings.Contains(strings.ToLower(body), `\ud`) {
				t.Fatalf("appendTextToken(%q) refused a token without escaped surrogates", tok)
			}
			return
		}
		want := gjson.AppendJSONString([]byte("x"), gjson.Parse(tok).Str)
		if want = append(want[:1], want[2:len(want)-1]...); !bytes.Equal(got, want) || end != len(tok) {
			t.Fatalf("appendTextToken(%q) = %q, end %d; unescaped and escaped again %q, end %d", tok, got, end, want, len(tok))
		}
	})
}
