package mcpconfig

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestScrubSinglePass(t *testing.T) {
	sec := MergeSecrets(NewSecrets(
		"abcdefgh12",                // a prefix of the next: both masked whole
		"abcdefgh1234567890",        //
		"xxxxyyyyzzzzWWWW",          // overlaps the next
		"zzzzWWWWqqqqrrrr",          //
		"s3cr3t-value-long",         // inside a longer word: still masked (≥ WordSecretLen)
		"word8val",                  // under WordSecretLen: whole words only
		"seven77",                   // under MinSecretLen: not a secret
		"Bearer tok-abcdefghijklmn", // and its last word
	), urlSecrets("https://u:pw-secret-1@h.example/mcp?k=query-secret"))
	for _, tt := range []struct{ in, want string }{
		{"", ""},
		{"nothing here", "nothing here"},
		{"abcdefgh12", "***"},
		{"abcdefgh1234567890", "***"},
		{"[abcdefgh1234567890!]", "[***!]"},
		{"abcdefgh123", "abcdefgh123"}, // the short one, not as a word: kept
		{"abcdefgh12 abcdefgh1234567890", "*** ***"},
		{"xxxxyyyyzzzzWWWWqqqqrrrr", "***"}, // overlapping: the union
		{"zzzzWWWWqqqqrrrr and xxxxyyyyzzzzWWWW", "*** and ***"},
		{"pre_s3cr3t-value-long_post", "pre_***_post"},
		{"word8val", "***"},
		{"a word8val, b", "a ***, b"},
		{"word8valx xword8val word8val_", "word8valx xword8val word8val_"},
		{"seven77", "seven77"},
		{"Authorization: Bearer tok-abcdefghijklmn", "Authorization: ***"},
		{"token tok-abcdefghijklmn.", "token ***."},
		{"url https://u:pw-secret-1@h.example/mcp?k=query-secret end", "url https://***:***@h.example/mcp?k=*** end"},
		{"pw-secret-1 query-secret", "*** ***"}, // the URL's parts alone
		{"héllo abcdefgh12 wörld", "héllo *** wörld"},
	} {
		if got := sec.Scrub(tt.in); got != tt.want {
			t.Errorf("Scrub(%q)\n got %q\nwant %q", tt.in, got, tt.want)
		}
	}
}

func urlSecrets(u string) *Secrets {
	var b secretsBuilder
	b.addURLParts(u)
	b.addURL(u)
	return b.done()
}

// A set of one value (scrubOne) masks as a set of many does.
func TestScrubOneValue(t *testing.T) {
	for _, tt := range []struct{ v, in, want string }{
		{"abababababababab", "x abababababababababab y", "x *** y"}, // overlapping itself: one run
		{"abababab", "x abababababab y", "x abababababab y"},        // inside a longer word: kept
		{"abababab", "abababab abababab", "*** ***"},
		{"word8val", "word8val xword8val word8val_ (word8val)", "*** xword8val word8val_ (***)"},
		{"long-secret-value", "pre_long-secret-value_post long-secret-valu", "pre_***_post long-secret-valu"},
		{"long-secret-value", "none", "none"},
	} {
		sec := NewSecrets(tt.v)
		if sec.matcher().one == nil {
			t.Fatalf("%q: not a one-value matcher", tt.v)
		}
		if got := sec.Scrub(tt.in); got != tt.want {
			t.Errorf("Scrub(%q) with %q = %q, want %q", tt.in, tt.v, got, tt.want)
		}
		// The general path agrees.
		two := NewSecrets(tt.v, "another-unrelated-value")
		if got := two.Scrub(tt.in); got != tt.want {
			t.Errorf("two values: Scrub(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestScrubManySecretsLargeInput: 200 random values, each placed many
// times in a 1 MiB text (at its start and end too): none is left, and
// every other byte is kept.
func TestScrubManySecretsLargeInput(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	vals := make([]string, 200)
	for i := range vals {
		vals[i] = randText(r, 8+r.IntN(40), "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
	}
	sec := NewSecrets(vals...)
	var in, want strings.Builder
	for in.Len() < 1<<20 {
		v := vals[r.IntN(len(vals))]
		in.WriteString(v)
		want.WriteString(Mask)
		filler := " " + randText(r, r.IntN(200), "-. {}\"\\n") + " "
		in.WriteString(filler)
		want.WriteString(filler)
	}
	if got := sec.Scrub(in.String()); got != want.String() {
		for _, v := range vals {
			if strings.Contains(got, v) {
				t.Errorf("a value is left: %q", v)
			}
		}
		t.Fatalf("Scrub of 1 MiB: %d bytes, want %d", len(got), want.Len())
	}
	plain := strings.Repeat("no secret in this line at all, only words\n", 1<<20/42)
	if got := sec.Scrub(plain); got != plain {
		t.Error("Scrub changed a text without secrets")
	}
}

func randText(r *rand.Rand, n int, alphabet string) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return string(b)
}

// scrubPerValue is Scrub as it was before the single pass: one
// strings.ReplaceAll per value (a whole-word replace under WordSecretLen).
// Kept for BenchmarkScrub's comparison only.
func scrubPerValue(sec *Secrets, text string) string {
	for _, u := range sec.urls {
		text = strings.ReplaceAll(text, u[0], u[1])
	}
	for _, v := range sec.values {
		if len(v) >= WordSecretLen {
			text = strings.ReplaceAll(text, v, Mask)
		} else {
			text = replaceWordOld(text, v)
		}
	}
	return text
}

func replaceWordOld(text, w string) string {
	if !strings.Contains(text, w) {
		return text
	}
	var b strings.Builder
	for {
		i := strings.Index(text, w)
		if i < 0 {
			b.WriteString(text)
			return b.String()
		}
		end := i + len(w)
		if (i > 0 && isWordByte(text[i-1])) || (end < len(text) && isWordByte(text[end])) {
			b.WriteString(text[:i+1])
			text = text[i+1:]
			continue
		}
		b.WriteString(text[:i])
		b.WriteString(Mask)
		text = text[end:]
	}
}

// BenchmarkScrub: n random values (16–48 bytes) on a 1 MiB tool result
// (JSON-escaped text, a few values in it), the single pass against one
// ReplaceAll per value.
func BenchmarkScrub(b *testing.B) {
	for _, n := range []int{1, 5, 50} {
		r := rand.New(rand.NewPCG(3, 4))
		vals := make([]string, n)
		for i := range vals {
			vals[i] = randText(r, 16+r.IntN(32), "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
		}
		sec := NewSecrets(vals...)
		var sb strings.Builder
		for sb.Len() < 1<<20 {
			fmt.Fprintf(&sb, "line %d: total 48\\ndrwxr-xr-x  2 user user 4096 Nov 28 07:39 src-%x\\n", sb.Len(), r.Uint32())
			if r.IntN(2000) == 0 {
				sb.WriteString(vals[r.IntN(n)])
			}
		}
		text := sb.String()
		if got, want := sec.Scrub(text), scrubPerValue(sec, text); got != want {
			b.Fatal("the two scrubs disagree")
		}
		b.Run(fmt.Sprintf("secrets=%d/single-pass", n), func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for range b.N {
				sec.Scrub(text)
			}
		})
		b.Run(fmt.Sprintf("secrets=%d/per-value", n), func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for range b.N {
				scrubPerValue(sec, text)
			}
		})
	}
}

// The matcher is built once, at the first Scrub, whichever goroutine
// calls first; all see the same result.
func TestScrubConcurrentFirstUse(t *testing.T) {
	sec := NewSecrets("concurrent-secret-1", "concurrent-secret-2", "word8val")
	const in, want = "a concurrent-secret-2 b word8val c", "a *** b *** c"
	done := make(chan string)
	for range 8 {
		go func() { done <- sec.Scrub(in) }()
	}
	for range 8 {
		if got := <-done; got != want {
			t.Errorf("Scrub = %q, want %q", got, want)
		}
	}
}
