package probe

import (
	"net/url"
	"sort"
	"strings"

	"github.com/ccproxy/ccproxy/mcpconfig"
	"github.com/tidwall/gjson"
)

// minSecretLen is the shortest configured value that is masked wherever it
// appears in text shown to clients (messages, stderr tails). Shorter values
// ("1", "dev") would mask ordinary words and are not secrets worth the name.
const minSecretLen = 4

// scrubber removes a server's configured secrets from text: the values of
// its env and headers, the secret parts of its URL (mcpconfig.URLSecrets,
// as written and decoded), and secret-looking arguments. It is immutable.
type scrubber struct {
	secrets []string // longest first
	url     string   // the raw URL, replaced by its redacted form
	safeURL string
}

func newScrubber(expanded []byte) *scrubber {
	s := &scrubber{}
	add := func(v string) {
		if len(v) >= minSecretLen {
			s.secrets = append(s.secrets, v)
		}
	}
	cfg := gjson.ParseBytes(expanded)
	for _, key := range []string{"env", "headers"} {
		cfg.Get(key).ForEach(func(_, v gjson.Result) bool {
			val := v.String()
			add(val)
			// "Bearer abc": the token alone may be echoed too.
			if i := strings.LastIndexByte(val, ' '); i >= 0 {
				add(val[i+1:])
			}
			return true
		})
	}
	if raw := cfg.Get("url").String(); raw != "" {
		s.url, s.safeURL = raw, mcpconfig.RedactURL(raw)
		for _, v := range mcpconfig.URLSecrets(raw) {
			add(v)
			// A server may echo a value decoded ("a b" for "a%20b").
			if dec, err := url.QueryUnescape(v); err == nil && dec != v {
				add(dec)
			}
		}
	}
	var args []string
	cfg.Get("args").ForEach(func(_, v gjson.Result) bool {
		args = append(args, v.String())
		return true
	})
	red := mcpconfig.RedactArgs(args)
	for i := range args {
		if i < len(red) && red[i] != args[i] {
			add(args[i])
			if j := strings.IndexByte(args[i], '='); j >= 0 {
				add(args[i][j+1:])
			}
		}
	}
	sort.Slice(s.secrets, func(i, j int) bool { return len(s.secrets[i]) > len(s.secrets[j]) })
	return s
}

// clean masks every secret in text.
func (s *scrubber) clean(text string) string {
	if s == nil {
		return text
	}
	if s.url != "" && s.url != s.safeURL {
		text = strings.ReplaceAll(text, s.url, s.safeURL)
	}
	for _, v := range s.secrets {
		if len(v) >= wordSecretLen {
			text = strings.ReplaceAll(text, v, mcpconfig.Mask)
		} else {
			text = replaceWord(text, v)
		}
	}
	return text
}

// wordSecretLen: a secret shorter than this is masked only where it stands
// alone (not inside a longer word), so that a value such as "prod" does not
// mangle "production"; longer ones are masked wherever they appear.
const wordSecretLen = 12

// replaceWord replaces the occurrences of w in text that are not part of a
// longer word (letters, digits, '_').
func replaceWord(text, w string) string {
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
		b.WriteString(mcpconfig.Mask)
		text = text[end:]
	}
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}
