package probe

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/ccproxy/ccproxy/protocol"
)

// paramsJSON encodes parameters for comparison.
func paramsJSON(t testing.TB, ps []Parameter) string {
	t.Helper()
	b, err := json.Marshal(ps)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// sameJSON compares two JSON texts semantically.
func sameJSON(t testing.TB, got, want string) bool {
	t.Helper()
	var g, w any
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, got)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("want is not JSON: %v\n%s", err, want)
	}
	return reflect.DeepEqual(g, w)
}

// checkParamShape validates a tree with the protocol's rules.
func checkParamShape(t testing.TB, ps []Parameter) {
	t.Helper()
	res := protocol.MCPToolsResult{Server: "s", Tools: Wire.Tools([]Tool{{Name: "t", InputSchema: json.RawMessage(`{}`), Parameters: ps}})}
	if err := res.Validate(); err != nil {
		t.Errorf("parameter tree breaks the protocol: %v", err)
	}
}

// TestParametersEdgeCases converts hand-written schemas that exercise
// every construct the converter handles or must report.
func TestParametersEdgeCases(t *testing.T) {
	cases := []struct {
		name, schema, want string
	}{
		{"nullable type list",
			`{"type":"object","properties":{"a":{"type":["string","null"],"description":"maybe"}}}`,
			`[{"name":"a","path":"a","type":"string","nullable":true,"description":"maybe","required":false}]`},
		{"openapi nullable",
			`{"type":"object","properties":{"a":{"type":"integer","nullable":true}}}`,
			`[{"name":"a","path":"a","type":"integer","nullable":true,"required":false}]`},
		{"anyOf with null collapses (pydantic Optional)",
			`{"type":"object","properties":{"limit":{"anyOf":[{"type":"integer","minimum":1},{"type":"null"}],"default":null,"title":"Limit"}},"required":["limit"]}`,
			`[{"name":"limit","path":"limit","type":"integer","nullable":true,"minimum":1,"default":null,"description":"Limit","required":true}]`},
		{"oneOf of objects",
			`{"type":"object","properties":{"shape":{"oneOf":[
				{"type":"object","properties":{"kind":{"const":"circle"},"r":{"type":"number"}},"required":["kind","r"]},
				{"type":"object","properties":{"kind":{"const":"square"},"side":{"type":"number"}},"required":["kind"]}]}}}`,
			`[{"name":"shape","path":"shape","type":"object","required":false,"oneOf":[
				{"name":"shape","path":"shape","type":"object","required":false,"properties":[
					{"name":"kind","path":"shape.kind","type":"string","enum":["circle"],"required":true},
					{"name":"r","path":"shape.r","type":"number","required":true}]},
				{"name":"shape","path":"shape","type":"object","required":false,"properties":[
					{"name":"kind","path":"shape.kind","type":"string","enum":["square"],"required":true},
					{"name":"side","path":"shape.side","type":"number","required":false}]}]}]`},
		{"anyOf of different types",
			`{"type":"object","properties":{"v":{"anyOf":[{"type":"string","maxLength":3},{"type":"array","items":{"type":"integer"}}]}}}`,
			`[{"name":"v","path":"v","type":"any","required":false,"anyOf":[
				{"name":"v","path":"v","type":"string","maxLength":3,"required":false},
				{"name":"v","path":"v","type":"array","required":false,"items":{"name":"v","path":"v[]","type":"integer","required":false}}]}]`},
		{"$ref into $defs and definitions",
			`{"type":"object","properties":{"p":{"$ref":"#/$defs/Point"},"c":{"$ref":"#/definitions/Color"}},"required":["p"],
			  "$defs":{"Point":{"type":"object","description":"a point","properties":{"x":{"type":"number"},"y":{"$ref":"#/$defs/Coord"}},"required":["x"]},"Coord":{"type":"number","minimum":0}},
			  "definitions":{"Color":{"enum":["red","green"]}}}`,
			`[{"name":"p","path":"p","type":"object","description":"a point","required":true,"properties":[
				{"name":"x","path":"p.x","type":"number","required":true},
				{"name":"y","path":"p.y","type":"number","minimum":0,"required":false}]},
			  {"name":"c","path":"c","type":"string","enum":["red","green"],"required":false}]`},
		{"recursive $ref is cut and reported",
			`{"type":"object","properties":{"tree":{"$ref":"#/$defs/Node"}},"$defs":{"Node":{"type":"object","properties":{"name":{"type":"string"},"children":{"type":"array","items":{"$ref":"#/$defs/Node"}}}}}}`,
			`[{"name":"tree","path":"tree","type":"object","required":false,"properties":[
				{"name":"name","path":"tree.name","type":"string","required":false},
				{"name":"children","path":"tree.children","type":"array","required":false,"items":
					{"name":"children","path":"tree.children[]","type":"object","required":false,"unsupported":"recursive $ref \"#/$defs/Node\": its content is shown once, further up"}}]}]`},
		{"external and dangling $ref are reported",
			`{"type":"object","properties":{"a":{"$ref":"https://example.com/s.json"},"b":{"$ref":"#/$defs/Nope"}}}`,
			`[{"name":"a","path":"a","type":"any","required":false,"unsupported":"$ref \"https://example.com/s.json\" points outside the schema; it is not followed; this part accepts anything"},
			  {"name":"b","path":"b","type":"any","required":false,"unsupported":"$ref \"#/$defs/Nope\" points at nothing; this part accepts anything"}]`},
		{"allOf merges objects",
			`{"type":"object","properties":{"o":{"allOf":[{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]},{"properties":{"b":{"type":"boolean"}}}]}}}`,
			`[{"name":"o","path":"o","type":"object","required":false,"properties":[
				{"name":"a","path":"o.a","type":"string","required":true},
				{"name":"b","path":"o.b","type":"boolean","required":false}]}]`},
		{"several types",
			`{"type":"object","properties":{"id":{"type":["string","integer"],"description":"an id","minimum":1}}}`,
			`[{"name":"id","path":"id","type":"any","description":"an id","required":false,"anyOf":[
				{"name":"id","path":"id","type":"string","required":false},
				{"name":"id","path":"id","type":"integer","minimum":1,"required":false}]}]`},
		{"types inferred",
			`{"properties":{"e":{"enum":[1,2.5]},"s":{"maxLength":4},"o":{"properties":{}},"a":{"items":{}},"x":{}}}`,
			`[{"name":"e","path":"e","type":"number","enum":[1,2.5],"required":false},
			  {"name":"s","path":"s","type":"string","maxLength":4,"required":false},
			  {"name":"o","path":"o","type":"object","required":false},
			  {"name":"a","path":"a","type":"array","required":false,"items":{"name":"a","path":"a[]","type":"any","required":false}},
			  {"name":"x","path":"x","type":"any","required":false}]`},
		{"exclusive bounds, draft 2020 and draft 4",
			`{"type":"object","properties":{"a":{"type":"number","exclusiveMinimum":0},"b":{"type":"number","maximum":10,"exclusiveMaximum":true}}}`,
			`[{"name":"a","path":"a","type":"number","minimum":0,"required":false,"unsupported":"exclusiveMinimum: must be greater than 0"},
			  {"name":"b","path":"b","type":"number","maximum":10,"required":false,"unsupported":"exclusiveMaximum: must be less than 10"}]`},
		{"constraints that have no member",
			`{"type":"object","properties":{"tags":{"type":"array","items":{"type":"string"},"minItems":1,"uniqueItems":true},"n":{"type":"integer","multipleOf":5},
			  "m":{"type":"object","additionalProperties":{"type":"string"}},"pp":{"type":"object","patternProperties":{"^x":{}}},"t":{"type":"array","prefixItems":[{"type":"string"},{"type":"number"}]}}}`,
			`[{"name":"tags","path":"tags","type":"array","required":false,"items":{"name":"tags","path":"tags[]","type":"string","required":false},"unsupported":"minItems 1, uniqueItems: checked when calling, not shown"},
			  {"name":"n","path":"n","type":"integer","required":false,"unsupported":"multipleOf 5: checked when calling, not shown"},
			  {"name":"m","path":"m","type":"object","required":false,"unsupported":"additionalProperties (a schema for other keys): checked when calling, not shown"},
			  {"name":"pp","path":"pp","type":"object","required":false,"unsupported":"patternProperties: not supported, not checked"},
			  {"name":"t","path":"t","type":"array","required":false,"unsupported":"a tuple of 2 positional items: checked when calling, not shown"}]`},
		{"a pattern Go cannot check",
			`{"type":"object","properties":{"p":{"type":"string","pattern":"^(?!x)"}}}`,
			`[{"name":"p","path":"p","type":"string","pattern":"^(?!x)","required":false,"unsupported":"pattern uses syntax Go's regexp cannot check, so it is not checked"}]`},
		{"odd property names and title",
			`{"type":"object","properties":{"x y":{"type":"object","title":"X Y","properties":{"a.b":{"type":"string"}}}},"required":["x y","ghost"]}`,
			`[{"name":"x y","path":"[\"x y\"]","type":"object","description":"X Y","required":true,"properties":[
				{"name":"a.b","path":"[\"x y\"][\"a.b\"]","type":"string","required":false}]}]`},
		{"top-level anyOf",
			`{"anyOf":[{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]},{"type":"object","properties":{"b":{"type":"string"}},"required":["b"]}]}`,
			`[{"name":"arguments","path":"$","type":"object","required":true,"anyOf":[
				{"name":"arguments","path":"$","type":"object","required":false,"properties":[{"name":"a","path":"a","type":"string","required":true}]},
				{"name":"arguments","path":"$","type":"object","required":false,"properties":[{"name":"b","path":"b","type":"string","required":true}]}]}]`},
		{"true schema", `true`, `[]`},
		{"format, default, enum of strings",
			`{"type":"object","properties":{"when":{"type":"string","format":"date-time","default":"2026-01-01T00:00:00Z"},"lvl":{"type":"string","enum":["a","b"]}}}`,
			`[{"name":"when","path":"when","type":"string","format":"date-time","default":"2026-01-01T00:00:00Z","required":false},
			  {"name":"lvl","path":"lvl","type":"string","enum":["a","b"],"required":false}]`},
		{"invalid keywords are reported",
			`{"type":"object","properties":{"a":{"type":"strin","minLength":-1},"b":{"type":"string","required":true}}}`,
			`[{"name":"a","path":"a","type":"strin","required":false,"unsupported":"invalid schema: unknown type \"strin\"; invalid schema: minLength must be a non-negative integer"},
			  {"name":"b","path":"b","type":"string","required":false,"unsupported":"invalid schema: required must be a list of names"}]`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := ParseToolSchema(json.RawMessage(c.schema))
			if err != nil {
				t.Fatal(err)
			}
			got := paramsJSON(t, s.Parameters())
			if !sameJSON(t, got, c.want) {
				t.Errorf("parameters differ\n got: %s\nwant: %s", got, c.want)
			}
		})
	}
}

func TestParametersRootNotesAndErrors(t *testing.T) {
	s, err := ParseToolSchema(json.RawMessage(`{"type":"object","properties":{"a":{"type":"string"}},"required":["a","zz"],"minProperties":1,"if":{"required":["a"]},"then":{}}`))
	if err != nil {
		t.Fatal(err)
	}
	notes := strings.Join(s.Notes(), "; ")
	for _, want := range []string{"required but not described: zz", "minProperties 1", "if/then/else"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes %q lack %q", notes, want)
		}
	}
	for _, bad := range []string{`[1]`, `"x"`, `{`, `false`, ``} {
		if _, err := ParseToolSchema(json.RawMessage(bad)); err == nil {
			t.Errorf("ParseToolSchema(%q) succeeded", bad)
		}
	}
	// Types are named as in argument errors ("a string", "an array").
	for bad, want := range map[string]string{`[1]`: "got an array", `"x"`: "got a string", `false`: "got a boolean", `null`: "got null", `2`: "got a number"} {
		if _, err := ParseToolSchema(json.RawMessage(bad)); err == nil || !errors.Is(err, ErrSchema) || !strings.HasSuffix(err.Error(), "must be a JSON object, "+want) {
			t.Errorf("ParseToolSchema(%q): %v, want ... %s", bad, err, want)
		}
	}
	s, err = ParseToolSchema(json.RawMessage(`{"properties":{"a":"text","b":[1]}}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := paramsJSON(t, s.Parameters()); !strings.Contains(got, "a schema must be an object or a boolean, got a string") ||
		!strings.Contains(got, "a schema must be an object or a boolean, got an array") {
		t.Errorf("parameters %s", got)
	}
}

// TestParametersBounded feeds schemas that would expand without end: a
// deep chain, a $ref fan-out, a $ref loop on itself.
func TestParametersBounded(t *testing.T) {
	// 40 nested objects.
	deep := `{"type":"string"}`
	for i := 0; i < 40; i++ {
		deep = `{"type":"object","properties":{"n":` + deep + `}}`
	}
	s, err := ParseToolSchema(json.RawMessage(deep))
	if err != nil {
		t.Fatal(err)
	}
	if got := paramsJSON(t, s.Parameters()); !strings.Contains(got, "not expanded: nested more than") {
		t.Errorf("a 40-deep schema is not cut: %.300s", got)
	}
	// Each level refers to the next one twice: 2^20 nodes if expanded.
	defs := []string{}
	for i := 0; i < 20; i++ {
		defs = append(defs, fmt.Sprintf(`"L%d":{"type":"object","properties":{"a":{"$ref":"#/$defs/L%d"},"b":{"$ref":"#/$defs/L%d"}}}`, i, i+1, i+1))
	}
	defs = append(defs, `"L20":{"type":"string"}`)
	fan := `{"type":"object","properties":{"root":{"$ref":"#/$defs/L0"}},"$defs":{` + strings.Join(defs, ",") + `}}`
	s, err = ParseToolSchema(json.RawMessage(fan))
	if err != nil {
		t.Fatal(err)
	}
	got := paramsJSON(t, s.Parameters())
	if !strings.Contains(got, "not expanded: the schema has more than") {
		t.Errorf("a $ref fan-out is not cut")
	}
	if len(got) > 5<<20 {
		t.Errorf("the tree is %d bytes", len(got))
	}
	for _, loop := range []string{`{"$ref":"#"}`, `{"type":"object","properties":{"a":{"$ref":"#/properties/a"}}}`, `{"allOf":[{"$ref":"#"}],"type":"object"}`} {
		s, err := ParseToolSchema(json.RawMessage(loop))
		if err != nil {
			t.Fatal(err)
		}
		ps := s.Parameters()
		checkParamShape(t, ps)
		if errs := s.Validate(json.RawMessage(`{"a":1}`)); len(errs) > 1 {
			t.Errorf("%s: validation of a loop: %v", loop, errs)
		}
	}
}

// filterSchema is a schema with nesting, arrays of objects, enums, bounds
// and combinators, for the validation table.
const filterSchema = `{
  "type": "object",
  "properties": {
    "query": {"type": "string", "minLength": 1, "maxLength": 5, "pattern": "^[a-zé]+$"},
    "limit": {"type": "integer", "minimum": 1, "maximum": 100},
    "ratio": {"type": "number", "exclusiveMinimum": 0, "multipleOf": 0.5},
    "order": {"type": "string", "enum": ["asc", "desc"]},
    "mode":  {"const": "fast"},
    "flag":  {"type": "boolean"},
    "note":  {"type": ["string", "null"]},
    "filters": {
      "type": "array", "maxItems": 3,
      "items": {
        "type": "object",
        "properties": {
          "key":   {"type": "string"},
          "value": {"anyOf": [{"type": "string"}, {"type": "number", "minimum": 0}]},
          "op":    {"$ref": "#/$defs/op"}
        },
        "required": ["key"],
        "additionalProperties": false
      }
    },
    "tags":  {"type": "array", "items": {"type": "string"}, "uniqueItems": true, "minItems": 1},
    "shape": {"oneOf": [{"type": "object", "properties": {"r": {"type": "number"}}, "required": ["r"]},
                        {"type": "object", "properties": {"side": {"type": "number"}}, "required": ["side"]}]},
    "meta":  {"type": "object", "additionalProperties": {"type": "integer"}},
    "tree":  {"$ref": "#/$defs/node"}
  },
  "required": ["query"],
  "additionalProperties": false,
  "$defs": {
    "op": {"type": "string", "enum": ["eq", "ne", "lt"]},
    "node": {"type": "object", "properties": {"v": {"type": "integer"}, "kids": {"type": "array", "items": {"$ref": "#/$defs/node"}}}}
  }
}`

func TestValidate(t *testing.T) {
	s, err := ParseToolSchema(json.RawMessage(filterSchema))
	if err != nil {
		t.Fatal(err)
	}
	type fe = FieldError
	cases := []struct {
		name string
		args string
		want []fe
	}{
		{"valid, minimal", `{"query":"abc"}`, nil},
		{"valid, everything", `{"query":"é","limit":100,"ratio":1.5,"order":"asc","mode":"fast","flag":false,"note":null,
			"filters":[{"key":"a","value":"x","op":"eq"},{"key":"b","value":0}],"tags":["x","y"],"shape":{"r":1},"meta":{"a":1},
			"tree":{"v":1,"kids":[{"v":2,"kids":[{"v":3}]}]}}`, nil},
		{"empty arguments", ``, []fe{{Path: "query", Code: ParamRequired, Message: "is required"}}},
		{"null arguments", `null`, []fe{{Path: "query", Code: ParamRequired, Message: "is required"}}},
		{"not an object", `[1]`, []fe{{Path: "$", Code: ParamInvalidType, Message: "the arguments must be an object, got an array"}}},
		{"not JSON", `{"query":`, []fe{{Path: "$", Code: ParamInvalidType, Message: "the arguments are not valid JSON"}}},
		{"wrong type", `{"query":5}`, []fe{{Path: "query", Code: ParamInvalidType, Message: "must be a string, got a number"}}},
		{"integer wanted", `{"query":"a","limit":2.5}`, []fe{{Path: "limit", Code: ParamInvalidType, Message: "must be an integer, got the number 2.5"}}},
		{"integral float is an integer", `{"query":"a","limit":2.0}`, nil},
		{"null not allowed", `{"query":null}`, []fe{{Path: "query", Code: ParamInvalidType, Message: "must be a string, got null"}}},
		{"too short, too long, pattern (runes counted)", `{"query":""}`, []fe{
			{Path: "query", Code: ParamConstraintViolated, Message: "must be at least 1 characters long, got 0"},
			{Path: "query", Code: ParamConstraintViolated, Message: "must match the pattern ^[a-zé]+$"}}},
		{"runes, not bytes", `{"query":"ééééé"}`, nil},
		{"too long", `{"query":"abcdef"}`, []fe{{Path: "query", Code: ParamConstraintViolated, Message: "must be at most 5 characters long, got 6"}}},
		{"bounds", `{"query":"a","limit":0,"ratio":0}`, []fe{
			{Path: "limit", Code: ParamConstraintViolated, Message: "must be at least 1, got 0"},
			{Path: "ratio", Code: ParamConstraintViolated, Message: "must be greater than 0, got 0"}}},
		{"maximum and multipleOf", `{"query":"a","limit":101,"ratio":0.7}`, []fe{
			{Path: "limit", Code: ParamConstraintViolated, Message: "must be at most 100, got 101"},
			{Path: "ratio", Code: ParamConstraintViolated, Message: "must be a multiple of 0.5, got 0.7"}}},
		{"enum and const", `{"query":"a","order":"up","mode":"slow"}`, []fe{
			{Path: "order", Code: ParamEnumInvalid, Message: `must be one of "asc", "desc", got "up"`},
			{Path: "mode", Code: ParamEnumInvalid, Message: `must be "fast", got "slow"`}}},
		{"nested paths", `{"query":"a","filters":[{"key":"a"},{"key":"b","op":"gt"},{"value":"x","extra":1}]}`, []fe{
			{Path: "filters[1].op", Code: ParamEnumInvalid, Message: `must be one of "eq", "ne", "lt", got "gt"`},
			{Path: "filters[2].key", Code: ParamRequired, Message: "is required"},
			{Path: "filters[2].extra", Code: ParamConstraintViolated, Message: "is not a parameter of this tool; known: key, value, op"}}},
		{"nested type", `{"query":"a","filters":[{"key":1}]}`, []fe{{Path: "filters[0].key", Code: ParamInvalidType, Message: "must be a string, got a number"}}},
		{"array bounds", `{"query":"a","filters":[{"key":"a"},{"key":"a"},{"key":"a"},{"key":"a"}],"tags":[]}`, []fe{
			{Path: "filters", Code: ParamConstraintViolated, Message: "must have at most 3 items, got 4"},
			{Path: "tags", Code: ParamConstraintViolated, Message: "must have at least 1 items, got 0"}}},
		{"unique items", `{"query":"a","tags":["x","y","x"]}`, []fe{{Path: "tags", Code: ParamConstraintViolated, Message: "items must be unique: items 0 and 2 are equal"}}},
		{"anyOf: the fitting branch explains", `{"query":"a","filters":[{"key":"k","value":-1}]}`, []fe{
			{Path: "filters[0].value", Code: ParamConstraintViolated, Message: "must be at least 0, got -1"}}},
		{"anyOf: no branch fits", `{"query":"a","filters":[{"key":"k","value":true}]}`, []fe{
			{Path: "filters[0].value", Code: ParamInvalidType, Message: "must be a string or a number, got a boolean"}}},
		{"oneOf: none", `{"query":"a","shape":{}}`, []fe{{Path: "shape.r", Code: ParamRequired, Message: "is required"}}},
		{"oneOf: two", `{"query":"a","shape":{"r":1,"side":2}}`, []fe{
			{Path: "shape", Code: ParamConstraintViolated, Message: "matches 2 of the alternatives, but must match exactly one (oneOf)"}}},
		{"additionalProperties schema", `{"query":"a","meta":{"a":1,"b":"x"}}`, []fe{{Path: "meta.b", Code: ParamInvalidType, Message: "must be an integer, got a string"}}},
		{"unknown top-level key", `{"query":"a","qeury":"b"}`, []fe{
			{Path: "qeury", Code: ParamConstraintViolated, Message: "is not a parameter of this tool; known: query, limit, ratio, order, mode, flag, note, filters, tags, shape, meta, tree"}}},
		{"recursive schema, deep value", `{"query":"a","tree":{"kids":[{"kids":[{"v":"x"}]}]}}`, []fe{
			{Path: "tree.kids[0].kids[0].v", Code: ParamInvalidType, Message: "must be an integer, got a string"}}},
		{"nullable accepts null, not other types", `{"query":"a","note":1}`, []fe{{Path: "note", Code: ParamInvalidType, Message: "must be a string or null, got a number"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := s.Validate(json.RawMessage(c.args))
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("Validate(%s)\n got: %+v\nwant: %+v", c.args, got, c.want)
			}
		})
	}
}

func TestValidateBounded(t *testing.T) {
	s, err := ParseToolSchema(json.RawMessage(`{"type":"object","properties":{"xs":{"type":"array","items":{"type":"string"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	args := `{"xs":[` + strings.TrimSuffix(strings.Repeat("1,", 500), ",") + `]}`
	errs := s.Validate(json.RawMessage(args))
	if len(errs) != maxFieldErrors {
		t.Fatalf("got %d errors, want %d", len(errs), maxFieldErrors)
	}
	if last := errs[len(errs)-1]; last.Message != "and 401 more problems" {
		t.Errorf("last error = %+v", last)
	}
	// A value nested deeper than the bound is reported, not recursed into.
	deep := strings.Repeat(`{"a":`, 200) + "1" + strings.Repeat("}", 200)
	s, err = ParseToolSchema(json.RawMessage(`{"$ref":"#/$defs/n","$defs":{"n":{"type":"object","properties":{"a":{"$ref":"#/$defs/n"}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	errs = s.Validate(json.RawMessage(deep))
	if len(errs) == 0 || !strings.Contains(errs[0].Message, "nested too deeply") {
		t.Errorf("deep value: %v", errs)
	}
}
