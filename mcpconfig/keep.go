package mcpconfig

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// KeepMasked resolves the "keep unchanged" marker of an edit: a client
// only ever sees a definition redacted (Server.Redacted), so to leave a
// secret as it is it sends back the redacted text it was shown. Every
// string of sent that contains Mask ("***") and is a masked form of the
// string at the same place in stored (same key path; each Mask standing
// for one or more characters, as MaskValue, RedactURL and RedactArgs
// produce it) is replaced by the stored string; any other string is kept
// as sent, so a changed value replaces the stored one. A string holding
// Mask that matches nothing stored at its place (a renamed key, a moved
// argument, an edited URL that still holds a masked part) is refused with
// ErrBadInput naming the place, never a value: writing "***" as a secret
// would break the server silently. A stored string that is itself the
// sent text (a literal "***") is kept.
//
// stored is the definition as written in its file (Server.Raw, or the
// member found by FindServer); sent is the client's definition after
// NormalizeDefinition. The result has sent's keys in sent's order.
func KeepMasked(name string, stored, sent json.RawMessage) (json.RawMessage, error) {
	if !strings.Contains(string(sent), Mask) {
		return sent, nil
	}
	out := []byte(sent)
	var err error
	var walk func(path, where string, st, se gjson.Result)
	walk = func(path, where string, st, se gjson.Result) {
		if err != nil {
			return
		}
		switch {
		case se.Type == gjson.String:
			if !strings.Contains(se.Str, Mask) || (st.Type == gjson.String && st.Str == se.Str) {
				return
			}
			if st.Type != gjson.String || !maskedFormOf(se.Str, st.Str) {
				err = badInput("server %q: %s holds the masked placeholder %s, but no stored value there matches it (type the value again, or send the text shown unchanged to keep it)", name, where, Mask)
				return
			}
			out, err = sjson.SetBytes(out, path, st.Str)
		case se.IsObject():
			se.ForEach(func(k, v gjson.Result) bool {
				walk(join(path, escapePath(k.Str)), where+"."+k.Str, member(st, k.Str), v)
				return err == nil
			})
		case se.IsArray():
			var items []gjson.Result
			if st.IsArray() {
				items = st.Array()
			}
			i := 0
			se.ForEach(func(_, v gjson.Result) bool {
				var sv gjson.Result
				if i < len(items) {
					sv = items[i]
				}
				walk(join(path, strconv.Itoa(i)), where+"["+strconv.Itoa(i)+"]", sv, v)
				i++
				return err == nil
			})
		}
	}
	root := gjson.ParseBytes(sent)
	st := gjson.ParseBytes(stored)
	root.ForEach(func(k, v gjson.Result) bool {
		walk(escapePath(k.Str), k.Str, member(st, k.Str), v)
		return err == nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// maskedFormOf reports whether masked, read as a pattern in which each
// Mask stands for one or more characters and the rest is literal, matches
// all of value.
func maskedFormOf(masked, value string) bool {
	parts := strings.Split(masked, Mask)
	if len(parts) == 1 {
		return masked == value
	}
	first, last := parts[0], parts[len(parts)-1]
	if !strings.HasPrefix(value, first) {
		return false
	}
	pos := len(first)
	for _, mid := range parts[1 : len(parts)-1] {
		// The Mask before mid takes at least one character; the leftmost
		// match of mid leaves the most room for the rest.
		if pos+1 > len(value) {
			return false
		}
		i := strings.Index(value[pos+1:], mid)
		if i < 0 {
			return false
		}
		pos += 1 + i + len(mid)
	}
	return len(value)-len(last) >= pos+1 && strings.HasSuffix(value, last)
}
