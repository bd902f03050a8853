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
// string of sent that contains Mask ("***") and is, exactly, a redacted
// form of the string at the same place in stored (same key path) is
// replaced by the stored string; any other string is kept as sent, so a
// changed value replaces the stored one. The redacted forms of a stored
// string are what a view shows of it: its place in the definition
// redacted without known secrets, and with sec (the configuration's
// Secrets, which Resolve masks in every server's view; may be nil), and
// MaskValue of the whole string. A mere pattern ("sk-***") is not
// accepted even where it would match: whether it matched would tell a
// client the secret's text, one probe at a time. A string holding Mask
// that is no redacted form of what is stored at its place (a renamed key,
// a moved argument, an edited URL that still holds a masked part) is
// refused with ErrBadInput naming the place, never a value: writing "***"
// as a secret would break the server silently. A stored string that is
// itself the sent text (a literal "***") is kept.
//
// stored is the definition as written in its file (Server.Raw, or the
// member found by FindServer); sent is the client's definition after
// NormalizeDefinition. The result has sent's keys in sent's order.
func KeepMasked(name string, stored, sent json.RawMessage, sec *Secrets) (json.RawMessage, error) {
	if !strings.Contains(string(sent), Mask) {
		return sent, nil
	}
	st := gjson.ParseBytes(stored)
	// at[0] is stored, the others its redacted views, walked in step.
	at := []gjson.Result{st}
	if st.IsObject() {
		fields := members(st)
		at = append(at, gjson.ParseBytes(redactDefinition(fields, len(stored), nil)))
		if sec != nil {
			at = append(at, gjson.ParseBytes(redactDefinition(fields, len(stored), sec)))
		}
	}
	step := func(at []gjson.Result, get func(gjson.Result) gjson.Result) []gjson.Result {
		next := make([]gjson.Result, len(at))
		for i, r := range at {
			next[i] = get(r)
		}
		return next
	}
	out := []byte(sent)
	var err error
	var walk func(path, where string, at []gjson.Result, se gjson.Result)
	walk = func(path, where string, at []gjson.Result, se gjson.Result) {
		if err != nil {
			return
		}
		st := at[0]
		switch {
		case se.Type == gjson.String:
			if !strings.Contains(se.Str, Mask) || (st.Type == gjson.String && st.Str == se.Str) {
				return
			}
			if st.Type != gjson.String || !shownAs(se.Str, st.Str, at[1:]) {
				err = badInput("server %q: %s holds the masked placeholder %s, but it is not the redacted form of the value stored there (type the value again, or send the text shown unchanged to keep it)", name, where, Mask)
				return
			}
			out, err = sjson.SetBytes(out, path, st.Str)
		case se.IsObject():
			se.ForEach(func(k, v gjson.Result) bool {
				walk(join(path, pathKey(k.Str)), where+"."+k.Str, step(at, func(r gjson.Result) gjson.Result { return member(r, k.Str) }), v)
				return err == nil
			})
		case se.IsArray():
			i := 0
			se.ForEach(func(_, v gjson.Result) bool {
				idx := i
				walk(join(path, strconv.Itoa(i)), where+"["+strconv.Itoa(i)+"]", step(at, func(r gjson.Result) gjson.Result { return item(r, idx) }), v)
				i++
				return err == nil
			})
		}
	}
	gjson.ParseBytes(sent).ForEach(func(k, v gjson.Result) bool {
		walk(pathKey(k.Str), k.Str, step(at, func(r gjson.Result) gjson.Result { return member(r, k.Str) }), v)
		return err == nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// shownAs reports whether masked is a redacted form of value: MaskValue of
// it, or the string at its place in one of the redacted views.
func shownAs(masked, value string, views []gjson.Result) bool {
	if masked == MaskValue(value) {
		return true
	}
	for _, v := range views {
		if v.Type == gjson.String && v.Str == masked {
			return true
		}
	}
	return false
}

// item is element i of array arr (the zero Result when there is none).
func item(arr gjson.Result, i int) gjson.Result {
	if !arr.IsArray() {
		return gjson.Result{}
	}
	var out gjson.Result
	n := 0
	arr.ForEach(func(_, v gjson.Result) bool {
		if n == i {
			out = v
			return false
		}
		n++
		return true
	})
	return out
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
