package protocol

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// Examples are named <schema>[--<variant>].json: examples/session.event--noise.json
// is a session/event frame validated by schema/session.event.json. Invalid
// examples live in examples/invalid with the same naming.

var (
	fileSchemasOnce sync.Once
	fileSchemas     map[string]*jsonschema.Resolved
	fileSchemasErr  error
)

// loadSchemas resolves every schema/*.json, loading $refs to sibling files
// (defs.json) from disk by their base name.
func loadSchemas(t *testing.T) map[string]*jsonschema.Resolved {
	t.Helper()
	fileSchemasOnce.Do(func() {
		files, err := filepath.Glob("schema/*.json")
		if err != nil || len(files) == 0 {
			fileSchemasErr = fmt.Errorf("no schema files: %v", err)
			return
		}
		read := func(name string) (*jsonschema.Schema, error) {
			b, err := os.ReadFile(filepath.Join("schema", name))
			if err != nil {
				return nil, err
			}
			var s jsonschema.Schema
			if err := json.Unmarshal(b, &s); err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			return &s, nil
		}
		loader := func(u *url.URL) (*jsonschema.Schema, error) {
			if !strings.HasPrefix(u.String(), SchemaBase) {
				return nil, fmt.Errorf("schema %s is not one of ours", u)
			}
			return read(path.Base(u.Path))
		}
		fileSchemas = map[string]*jsonschema.Resolved{}
		for _, f := range files {
			name := filepath.Base(f)
			s, err := read(name)
			if err != nil {
				fileSchemasErr = err
				return
			}
			if s.ID != SchemaBase+name {
				fileSchemasErr = fmt.Errorf("%s: $id is %q, want %q", name, s.ID, SchemaBase+name)
				return
			}
			r, err := s.Resolve(&jsonschema.ResolveOptions{Loader: loader, ValidateDefaults: true})
			if err != nil {
				fileSchemasErr = fmt.Errorf("resolving %s: %w", name, err)
				return
			}
			fileSchemas[strings.TrimSuffix(name, ".json")] = r
		}
	})
	if fileSchemasErr != nil {
		t.Fatal(fileSchemasErr)
	}
	return fileSchemas
}

type example struct {
	file   string // path
	name   string // base name without .json
	schema string // schema name: the part before "--"
	raw    []byte
}

func loadExamples(t *testing.T, dir string) []example {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no examples in %s", dir)
	}
	var out []example
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		schema, _, _ := strings.Cut(name, "--")
		out = append(out, example{file: f, name: name, schema: schema, raw: b})
	}
	return out
}

func validateJSON(r *jsonschema.Resolved, raw []byte) error {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return err
	}
	return r.Validate(v)
}

// requestTypeOfReply returns the request type a reply schema name answers:
// "mcp.call.reply" -> "mcp/call"; "" for the generic "reply".
func requestTypeOfReply(schema string) string {
	base, ok := strings.CutSuffix(schema, ".reply")
	if !ok {
		return ""
	}
	return strings.Replace(base, ".", "/", 1)
}

// decodeAndReencode runs an example frame through the Go API: parse, decode
// into the typed struct, build the frame again with the package's builders,
// and encode it.
func decodeAndReencode(ex example) ([]byte, error) {
	switch {
	case ex.schema == "http.mcp-status":
		var s MCPStatus
		if err := DecodeData("GET /v1/mcp/status", ex.raw, &s); err != nil {
			return nil, err
		}
		return json.Marshal(s)
	case ex.schema == "http.error":
		var body struct {
			Error *Error `json:"error"`
		}
		if err := json.Unmarshal(ex.raw, &body); err != nil {
			return nil, err
		}
		if body.Error == nil {
			return nil, errors.New("no error member")
		}
		if err := body.Error.Validate(); err != nil {
			return nil, err
		}
		return json.Marshal(body)
	}
	f, err := ParseFrame(ex.raw)
	if err != nil {
		return nil, err
	}
	var out Frame
	switch {
	case f.Type == TypeReply:
		rt := requestTypeOfReply(ex.schema)
		if !*f.OK {
			if rt != "" {
				if _, err := DecodeResult(rt, f); !errors.Is(err, f.Error) {
					return nil, fmt.Errorf("DecodeResult of an error reply returned %v, want the reply's error", err)
				}
			}
			out = NewErrorReply(f.ID, f.Error)
			break
		}
		if rt == "" {
			return nil, errors.New("a success reply example must be named <request>.reply")
		}
		d, err := DecodeResult(rt, f)
		if err != nil {
			return nil, err
		}
		if out, err = NewReply(f.ID, d); err != nil {
			return nil, err
		}
	case slices.Contains(requestTypes, f.Type) && !strings.HasSuffix(ex.schema, ".push"):
		d, err := DecodeRequest(f)
		if err != nil {
			return nil, err
		}
		if out, err = NewRequest(f.ID, f.Type, d); err != nil {
			return nil, err
		}
	default:
		d, err := DecodePush(f)
		if err != nil {
			return nil, err
		}
		if out, err = NewPush(f.Type, d); err != nil {
			return nil, err
		}
	}
	return json.Marshal(out)
}

func TestExamplesMatchSchemasAndRoundTrip(t *testing.T) {
	schemas := loadSchemas(t)
	for _, ex := range loadExamples(t, "examples") {
		t.Run(ex.name, func(t *testing.T) {
			r, ok := schemas[ex.schema]
			if !ok {
				t.Fatalf("no schema/%s.json for example %s", ex.schema, ex.file)
			}
			if err := validateJSON(r, ex.raw); err != nil {
				t.Fatalf("%s does not match schema/%s.json: %v", ex.file, ex.schema, err)
			}
			if !strings.HasPrefix(ex.schema, "http.") {
				if err := validateJSON(schemas["frame"], ex.raw); err != nil {
					t.Fatalf("%s does not match schema/frame.json: %v", ex.file, err)
				}
			}
			got, err := decodeAndReencode(ex)
			if err != nil {
				t.Fatalf("Go decode of %s: %v", ex.file, err)
			}
			if diff := jsonDiff(ex.raw, got); diff != "" {
				t.Fatalf("round trip of %s through the Go types changed it:\n%s\nre-encoded: %s", ex.file, diff, got)
			}
			// What the Go builders produce must match the schema too.
			if err := validateJSON(r, got); err != nil {
				t.Fatalf("re-encoded %s does not match its schema: %v", ex.file, err)
			}
		})
	}
}

func TestInvalidExamplesRejected(t *testing.T) {
	schemas := loadSchemas(t)
	for _, ex := range loadExamples(t, filepath.Join("examples", "invalid")) {
		t.Run(ex.name, func(t *testing.T) {
			r, ok := schemas[ex.schema]
			if !ok {
				t.Fatalf("no schema/%s.json for invalid example %s", ex.schema, ex.file)
			}
			err := validateJSON(r, ex.raw)
			if err == nil {
				t.Fatalf("schema/%s.json accepts %s", ex.schema, ex.file)
			}
			t.Logf("schema: %v", err)
			_, goErr := decodeAndReencode(ex)
			if goErr == nil {
				t.Fatalf("the Go decoder accepts %s", ex.file)
			}
			var pe *Error
			if !errors.As(goErr, &pe) || (pe.Code != CodeBadRequest && pe.Code != CodeUnknownType) {
				t.Fatalf("Go error for %s is %v, want a bad_request *Error", ex.file, goErr)
			}
			if strings.Contains(goErr.Error(), "validating ") {
				t.Errorf("the Go error for %s is the validator's raw message, not an explanation with a path: %v", ex.file, goErr)
			}
			t.Logf("go: %v", goErr)
		})
	}
}

// TestEveryMessageTypeIsCovered checks that the Go lists, the schema files,
// the examples and the SPEC agree, so that nothing is forgotten.
func TestEveryMessageTypeIsCovered(t *testing.T) {
	schemas := loadSchemas(t)
	examples := map[string]bool{}
	for _, ex := range loadExamples(t, "examples") {
		examples[ex.schema] = true
	}
	want := map[string]bool{"defs": true, "frame": true, "reply": true, "http.mcp-status": true, "http.error": true}
	for _, typ := range requestTypes {
		want[fileName(typ)] = true
		want[fileName(typ)+".reply"] = true
		if _, ok := NewRequestData(typ); !ok {
			t.Errorf("request %s has no Go data type", typ)
		}
		if _, ok := NewResultData(typ); !ok {
			t.Errorf("request %s has no Go result type", typ)
		}
	}
	for _, typ := range pushTypes {
		want[pushFileName(typ)] = true
		if _, ok := NewPushData(typ); !ok {
			t.Errorf("push %s has no Go data type", typ)
		}
	}
	for name := range want {
		if _, ok := schemas[name]; !ok {
			t.Errorf("missing schema/%s.json", name)
		}
		if name != "defs" && name != "frame" && !examples[name] {
			t.Errorf("missing an example for %s (examples/%s.json)", name, name)
		}
	}
	for name := range schemas {
		if !want[name] {
			t.Errorf("schema/%s.json is not a message type the Go package knows", name)
		}
	}
	if len(requestData) != len(requestTypes) || len(resultData) != len(requestTypes) || len(pushData) != len(pushTypes) {
		t.Errorf("registries and type lists differ in length: %d/%d requests, %d results, %d/%d pushes",
			len(requestData), len(requestTypes), len(resultData), len(pushData), len(pushTypes))
	}

	spec, err := os.ReadFile("SPEC.md")
	if err != nil {
		t.Fatal(err)
	}
	for i, typ := range append(append([]string{TypeReply}, requestTypes...), pushTypes...) {
		section := "### `" + typ + "`"
		if i > len(requestTypes) && pushFileName(typ) != fileName(typ) {
			section += " (push)"
		}
		if !strings.Contains(string(spec), section) {
			t.Errorf("SPEC.md has no section \"%s\"", section)
		}
	}
	for _, c := range codes {
		if !strings.Contains(string(spec), "| `"+string(c)+"` |") {
			t.Errorf("SPEC.md's error code table has no row for `%s`", c)
		}
	}
}

// TestProbeCodesHaveReplyCodes checks that every probe code has its
// mcp_* reply error code.
func TestProbeCodesHaveReplyCodes(t *testing.T) {
	for _, c := range probeCodes {
		if want := Code("mcp_" + strings.ToLower(c)); MCPCode(c) != want {
			t.Errorf("MCPCode(%s) = %s, want %s", c, MCPCode(c), want)
		}
	}
}

// jsonDiff compares two JSON documents semantically and describes the first
// differences, or returns "".
func jsonDiff(a, b []byte) string {
	var va, vb any
	if err := json.Unmarshal(a, &va); err != nil {
		return "first: " + err.Error()
	}
	if err := json.Unmarshal(b, &vb); err != nil {
		return "second: " + err.Error()
	}
	var diffs []string
	walkDiff("$", va, vb, &diffs)
	if len(diffs) > 10 {
		diffs = append(diffs[:10], "…")
	}
	return strings.Join(diffs, "\n")
}

func walkDiff(p string, a, b any, diffs *[]string) {
	switch av := a.(type) {
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok {
			*diffs = append(*diffs, fmt.Sprintf("%s: object became %T", p, b))
			return
		}
		keys := map[string]bool{}
		for k := range av {
			keys[k] = true
		}
		for k := range bv {
			keys[k] = true
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		for _, k := range sorted {
			x, inA := av[k]
			y, inB := bv[k]
			switch {
			case !inA:
				*diffs = append(*diffs, fmt.Sprintf("%s.%s: added (%v)", p, k, y))
			case !inB:
				*diffs = append(*diffs, fmt.Sprintf("%s.%s: dropped (was %v)", p, k, x))
			default:
				walkDiff(p+"."+k, x, y, diffs)
			}
		}
	case []any:
		bv, ok := b.([]any)
		if !ok || len(av) != len(bv) {
			*diffs = append(*diffs, fmt.Sprintf("%s: %v became %v", p, a, b))
			return
		}
		for i := range av {
			walkDiff(fmt.Sprintf("%s[%d]", p, i), av[i], bv[i], diffs)
		}
	default:
		if !reflect.DeepEqual(a, b) {
			*diffs = append(*diffs, fmt.Sprintf("%s: %v became %v", p, a, b))
		}
	}
}

// FuzzExplainAgrees: explain, which names the problems, agrees with
// jsonschema-go's verdict on every data object: it finds a problem exactly
// when the validator rejects. Seeded with every example, valid or not.
func FuzzExplainAgrees(f *testing.F) {
	for _, dir := range []string{"examples", filepath.Join("examples", "invalid")} {
		files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
		for _, file := range files {
			if b, err := os.ReadFile(file); err == nil {
				f.Add(b)
			}
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		fr, err := ParseFrame(b)
		if err != nil || len(fr.Data) == 0 {
			return
		}
		var types []reflect.Type
		switch {
		case fr.IsReply():
			for _, typ := range requestTypes {
				types = append(types, reflect.TypeOf(resultData[typ]()).Elem())
			}
		case requestData[fr.Type] != nil:
			types = append(types, reflect.TypeOf(requestData[fr.Type]()).Elem())
		case pushData[fr.Type] != nil:
			types = append(types, reflect.TypeOf(pushData[fr.Type]()).Elem())
		default:
			return
		}
		var inst any
		if err := json.Unmarshal(fr.Data, &inst); err != nil {
			t.Fatal(err)
		}
		for _, ty := range types {
			ts := schemas().byType[ty]
			verdict := ts.resolved.Validate(inst)
			var errs fieldErrors
			explain(ts.schema, inst, "data", &errs)
			if (verdict == nil) != (len(errs) == 0) {
				t.Fatalf("%v: the validator says %v, explain says %v", ty, verdict, errs)
			}
		}
	})
}
