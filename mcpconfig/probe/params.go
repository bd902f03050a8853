package probe

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
)

// Bounds on tool schemas. A schema beyond them is still usable: what is cut
// is reported in Parameter.Unsupported or ToolSchema.Notes.
const (
	// MaxSchemaBytes bounds the inputSchema ParseToolSchema accepts.
	MaxSchemaBytes = 4 << 20
	// maxSchemaNodes bounds the subschemas parsed from one document.
	maxSchemaNodes = 20000
	// maxParamDepth bounds the nesting of the parameter tree.
	maxParamDepth = 24
	// maxParams bounds the number of nodes of one parameter tree ($refs
	// used many times can make a tree much larger than its schema).
	maxParams = 5000
	// maxValidateDepth bounds how deep Validate descends into arguments.
	maxValidateDepth = 128
)

// ToolSchema is a tool's inputSchema, parsed once: the parameter tree shown
// to people (Parameters) and the checker of arguments (Validate). It is
// immutable and safe for concurrent use.
//
// The JSON Schema keywords understood are type (a string or a list; "null"
// in the list becomes Parameter.Nullable, as does OpenAPI's "nullable":
// true), properties, required, items, enum, const, default, description
// (title when there is none), minimum, maximum, exclusiveMinimum and
// exclusiveMaximum (draft 4 booleans and later numbers), multipleOf,
// minLength, maxLength, pattern, format, minItems, maxItems, uniqueItems,
// prefixItems (and draft 4 array "items"), additionalItems,
// additionalProperties, minProperties, maxProperties, anyOf, oneOf, allOf,
// not, if/then/else, and $ref to any JSON pointer inside the document
// ("#/$defs/X", "#/definitions/X", "#/properties/a", ...). A $ref cycle is
// expanded once and then cut, with a note in Unsupported; a $ref outside the
// document is reported and accepts anything. Annotations ($schema, $id,
// title, examples, readOnly, deprecated, ...) are ignored.
type ToolSchema struct {
	root   *schemaNode
	params []Parameter
	notes  []string
}

// schemaNode is one parsed subschema. Nodes form a graph: a $ref points at
// the node of its target, so cycles are possible.
type schemaNode struct {
	ptr string // JSON pointer of the node in the document

	boolSchema *bool // true or false as a whole schema

	types    []string // "type", as written ("integer", "null", ...)
	nullable bool     // OpenAPI "nullable": true
	descr    string
	title    string
	format   string
	def      json.RawMessage
	enum     []json.RawMessage
	enumVals []any
	hasConst bool
	constRaw json.RawMessage
	constVal any

	minimum, maximum     *float64
	exclMin, exclMax     *float64 // exclusive bounds (draft 6+ numbers, or draft 4 booleans applied)
	multipleOf           *float64
	minLength, maxLength *int64
	pattern              string
	re                   *regexp.Regexp
	patternErr           string
	minItems, maxItems   *int64
	uniqueItems          bool
	items                *schemaNode
	prefixItems          []*schemaNode
	additionalItems      *schemaNode // applies after prefixItems
	props                []schemaProp
	required             []string
	additional           *schemaNode // additionalProperties (a schema; false is a bool schema)
	minProps, maxProps   *int64
	anyOf, oneOf, allOf  []*schemaNode
	not                  *schemaNode
	ifS, thenS, elseS    *schemaNode
	ref                  string // as written
	refNode              *schemaNode
	refErr               string   // why the ref could not be resolved
	unknownChecks        []string // keywords with meaning that are neither shown nor checked
	invalid              []string // keywords with a value of the wrong kind
	hasProps, hasItems   bool
}

type schemaProp struct {
	name string
	node *schemaNode
}

// schemaParser parses one document into nodes, one per JSON pointer.
type schemaParser struct {
	doc   gjson.Result
	nodes map[string]*schemaNode
	count int
	over  bool
}

// ErrSchema marks an inputSchema that cannot be parsed at all (not JSON, not
// an object, too large).
var ErrSchema = errors.New("invalid tool input schema")

// ParseToolSchema parses a tool's inputSchema. It fails only when the schema
// is not a JSON object (or true, or larger than MaxSchemaBytes); every
// keyword it cannot use is reported, not rejected.
func ParseToolSchema(raw json.RawMessage) (*ToolSchema, error) {
	if len(raw) > MaxSchemaBytes {
		return nil, fmt.Errorf("%w: %d bytes, at most %d", ErrSchema, len(raw), MaxSchemaBytes)
	}
	if !gjson.ValidBytes(raw) {
		return nil, fmt.Errorf("%w: not valid JSON", ErrSchema)
	}
	doc := gjson.ParseBytes(raw)
	if !doc.IsObject() && doc.Type != gjson.True {
		return nil, fmt.Errorf("%w: must be a JSON object, got %s", ErrSchema, kindName(doc))
	}
	p := &schemaParser{doc: doc, nodes: map[string]*schemaNode{}}
	s := &ToolSchema{}
	s.root = p.parse("", doc)
	p.resolveAll()
	if p.over {
		s.notes = append(s.notes, fmt.Sprintf("the schema has more than %d subschemas; the rest accept anything", maxSchemaNodes))
	}
	b := &treeBuilder{}
	s.params, s.notes = b.root(s.root, s.notes)
	return s, nil
}

// Notes lists what the tree cannot say about the arguments object as a
// whole (for example "if/then/else" at the top level); each parameter's own
// notes are in its Unsupported member.
func (s *ToolSchema) Notes() []string { return append([]string(nil), s.notes...) }

func (p *schemaParser) parse(ptr string, v gjson.Result) *schemaNode {
	if n, ok := p.nodes[ptr]; ok {
		return n
	}
	n := &schemaNode{ptr: ptr}
	p.nodes[ptr] = n
	p.count++
	if p.count > maxSchemaNodes {
		p.over = true
		return n
	}
	switch v.Type {
	case gjson.True, gjson.False:
		b := v.Bool()
		n.boolSchema = &b
		return n
	case gjson.JSON:
		if !v.IsObject() {
			n.invalid = append(n.invalid, "a schema must be an object or a boolean, got an array")
			return n
		}
	default:
		n.invalid = append(n.invalid, "a schema must be an object or a boolean, got "+kindName(v))
		return n
	}
	kw := keywordCtx{p: p, n: n}
	v.ForEach(func(k, val gjson.Result) bool {
		kw.key = k.String()
		kw.sub = ptr + "/" + escapePointer(kw.key)
		if f, ok := schemaKeywords[kw.key]; ok {
			f(&kw, val)
		}
		return true
	})
	if kw.draft4ExclMin && n.minimum != nil {
		n.exclMin, n.minimum = n.minimum, nil
	}
	if kw.draft4ExclMax && n.maximum != nil {
		n.exclMax, n.maximum = n.maximum, nil
	}
	return n
}

// keywordCtx is what a keyword's parser works on: the node being built, the
// keyword and the JSON pointer of its value, and the draft 4 boolean
// exclusive bounds, applied once every keyword is read (they change the
// meaning of minimum and maximum, whichever order they come in).
type keywordCtx struct {
	p                            *schemaParser
	n                            *schemaNode
	key, sub                     string
	draft4ExclMin, draft4ExclMax bool
}

// invalid records what is wrong with the keyword's value.
func (c *keywordCtx) invalid(msg string) { c.n.invalid = append(c.n.invalid, msg) }

// list parses each schema of an array value, at sub/0, sub/1, ...
func (c *keywordCtx) list(val gjson.Result) []*schemaNode {
	var list []*schemaNode
	i := 0
	val.ForEach(func(_, it gjson.Result) bool {
		list = append(list, c.p.parse(c.sub+"/"+strconv.Itoa(i), it))
		i++
		return true
	})
	return list
}

// schemaKeywords maps each JSON Schema keyword the parser reads to what it
// sets on the node; keywords not in it are ignored, as JSON Schema says of
// unknown ones. Filled by init: its entries call parse, which reads it.
var schemaKeywords map[string]func(c *keywordCtx, val gjson.Result)

func init() {
	sub := func(set func(n *schemaNode, s *schemaNode)) func(*keywordCtx, gjson.Result) {
		return func(c *keywordCtx, val gjson.Result) { set(c.n, c.p.parse(c.sub, val)) }
	}
	number := func(field func(n *schemaNode) **float64) func(*keywordCtx, gjson.Result) {
		return func(c *keywordCtx, val gjson.Result) { *field(c.n) = numberPtr(val, &c.n.invalid, c.key) }
	}
	count := func(field func(n *schemaNode) **int64) func(*keywordCtx, gjson.Result) {
		return func(c *keywordCtx, val gjson.Result) { *field(c.n) = countPtr(val, &c.n.invalid, c.key) }
	}
	combinator := func(field func(n *schemaNode) *[]*schemaNode) func(*keywordCtx, gjson.Result) {
		return func(c *keywordCtx, val gjson.Result) {
			if !val.IsArray() {
				c.invalid(c.key + " must be a list of schemas")
				return
			}
			*field(c.n) = c.list(val)
		}
	}
	unchecked := func(c *keywordCtx, _ gjson.Result) { c.n.unknownChecks = append(c.n.unknownChecks, c.key) }
	schemaKeywords = map[string]func(*keywordCtx, gjson.Result){
		"type":        parseTypeKeyword,
		"nullable":    func(c *keywordCtx, val gjson.Result) { c.n.nullable = val.Type == gjson.True },
		"description": func(c *keywordCtx, val gjson.Result) { c.n.descr = val.String() },
		"title":       func(c *keywordCtx, val gjson.Result) { c.n.title = val.String() },
		"format":      func(c *keywordCtx, val gjson.Result) { c.n.format = val.String() },
		"default":     func(c *keywordCtx, val gjson.Result) { c.n.def = json.RawMessage(val.Raw) },
		"enum":        parseEnumKeyword,
		"const": func(c *keywordCtx, val gjson.Result) {
			c.n.hasConst = true
			c.n.constRaw = json.RawMessage(val.Raw)
			c.n.constVal = decodeValue(val.Raw)
		},
		"minimum": number(func(n *schemaNode) **float64 { return &n.minimum }),
		"maximum": number(func(n *schemaNode) **float64 { return &n.maximum }),
		"exclusiveMinimum": func(c *keywordCtx, val gjson.Result) {
			if val.IsBool() {
				c.draft4ExclMin = val.Bool()
			} else {
				c.n.exclMin = numberPtr(val, &c.n.invalid, c.key)
			}
		},
		"exclusiveMaximum": func(c *keywordCtx, val gjson.Result) {
			if val.IsBool() {
				c.draft4ExclMax = val.Bool()
			} else {
				c.n.exclMax = numberPtr(val, &c.n.invalid, c.key)
			}
		},
		"multipleOf": func(c *keywordCtx, val gjson.Result) {
			c.n.multipleOf = numberPtr(val, &c.n.invalid, c.key)
			if c.n.multipleOf != nil && *c.n.multipleOf <= 0 {
				c.invalid("multipleOf must be greater than 0")
				c.n.multipleOf = nil
			}
		},
		"minLength": count(func(n *schemaNode) **int64 { return &n.minLength }),
		"maxLength": count(func(n *schemaNode) **int64 { return &n.maxLength }),
		"pattern": func(c *keywordCtx, val gjson.Result) {
			c.n.pattern = val.String()
			if re, err := regexp.Compile(c.n.pattern); err != nil {
				c.n.patternErr = "pattern uses syntax Go's regexp cannot check, so it is not checked"
			} else {
				c.n.re = re
			}
		},
		"minItems":    count(func(n *schemaNode) **int64 { return &n.minItems }),
		"maxItems":    count(func(n *schemaNode) **int64 { return &n.maxItems }),
		"uniqueItems": func(c *keywordCtx, val gjson.Result) { c.n.uniqueItems = val.Type == gjson.True },
		"items": func(c *keywordCtx, val gjson.Result) {
			c.n.hasItems = true
			if val.IsArray() { // draft 4 tuple
				c.n.prefixItems = append(c.n.prefixItems, c.list(val)...)
			} else {
				c.n.items = c.p.parse(c.sub, val)
			}
		},
		"prefixItems": func(c *keywordCtx, val gjson.Result) {
			c.n.hasItems = true
			c.n.prefixItems = append(c.n.prefixItems, c.list(val)...)
		},
		"additionalItems": sub(func(n, s *schemaNode) { n.additionalItems = s }),
		"properties":      parsePropertiesKeyword,
		"required": func(c *keywordCtx, val gjson.Result) {
			if !val.IsArray() {
				// OpenAPI-style "required": true on a property is not JSON Schema.
				c.invalid("required must be a list of names")
				return
			}
			val.ForEach(func(_, r gjson.Result) bool {
				c.n.required = append(c.n.required, r.String())
				return true
			})
		},
		"additionalProperties": sub(func(n, s *schemaNode) { n.additional = s }),
		"minProperties":        count(func(n *schemaNode) **int64 { return &n.minProps }),
		"maxProperties":        count(func(n *schemaNode) **int64 { return &n.maxProps }),
		"anyOf":                combinator(func(n *schemaNode) *[]*schemaNode { return &n.anyOf }),
		"oneOf":                combinator(func(n *schemaNode) *[]*schemaNode { return &n.oneOf }),
		"allOf":                combinator(func(n *schemaNode) *[]*schemaNode { return &n.allOf }),
		"not":                  sub(func(n, s *schemaNode) { n.not = s }),
		"if":                   sub(func(n, s *schemaNode) { n.ifS = s }),
		"then":                 sub(func(n, s *schemaNode) { n.thenS = s }),
		"else":                 sub(func(n, s *schemaNode) { n.elseS = s }),
		"$ref":                 func(c *keywordCtx, val gjson.Result) { c.n.ref = val.String() },
		// $defs and definitions are parsed on demand, when a $ref points into them.
	}
	for _, k := range []string{"patternProperties", "dependentRequired", "dependentSchemas", "dependencies",
		"contains", "minContains", "maxContains", "propertyNames",
		"unevaluatedProperties", "unevaluatedItems", "$dynamicRef", "$recursiveRef"} {
		schemaKeywords[k] = unchecked
	}
}

func parseTypeKeyword(c *keywordCtx, val gjson.Result) {
	switch {
	case val.Type == gjson.String:
		c.n.types = []string{val.String()}
	case val.IsArray():
		val.ForEach(func(_, t gjson.Result) bool {
			if t.Type == gjson.String {
				c.n.types = append(c.n.types, t.String())
			}
			return true
		})
	default:
		c.invalid("type must be a string or a list of strings")
	}
	for _, t := range c.n.types {
		switch t {
		case "string", "number", "integer", "boolean", "object", "array", "null":
		default:
			c.invalid(fmt.Sprintf("unknown type %q", t))
		}
	}
}

func parseEnumKeyword(c *keywordCtx, val gjson.Result) {
	if !val.IsArray() {
		c.invalid("enum must be a list")
		return
	}
	c.n.enum = []json.RawMessage{}
	val.ForEach(func(_, e gjson.Result) bool {
		c.n.enum = append(c.n.enum, json.RawMessage(e.Raw))
		c.n.enumVals = append(c.n.enumVals, decodeValue(e.Raw))
		return true
	})
}

func parsePropertiesKeyword(c *keywordCtx, val gjson.Result) {
	c.n.hasProps = true
	if !val.IsObject() {
		c.invalid("properties must be an object")
		return
	}
	val.ForEach(func(pk, pv gjson.Result) bool {
		name := pk.String()
		c.n.props = append(c.n.props, schemaProp{name: name, node: c.p.parse(c.sub+"/"+escapePointer(name), pv)})
		return true
	})
}

// resolveAll resolves every $ref, parsing the nodes they point at (which
// may hold more $refs) until none is left.
func (p *schemaParser) resolveAll() {
	for done := map[*schemaNode]bool{}; ; {
		var todo []*schemaNode
		for _, n := range p.nodes {
			if n.ref != "" && !done[n] {
				todo = append(todo, n)
			}
		}
		if len(todo) == 0 {
			return
		}
		for _, n := range todo {
			done[n] = true
			p.resolve(n)
		}
	}
}

func (p *schemaParser) resolve(n *schemaNode) {
	ref := n.ref
	if !strings.HasPrefix(ref, "#") {
		n.refErr = fmt.Sprintf("$ref %q points outside the schema; it is not followed", ref)
		return
	}
	frag := ref[1:]
	if frag != "" && !strings.HasPrefix(frag, "/") {
		n.refErr = fmt.Sprintf("$ref %q names an anchor; anchors are not followed", ref)
		return
	}
	target, ptr, ok := lookupPointer(p.doc, frag)
	if !ok {
		n.refErr = fmt.Sprintf("$ref %q points at nothing", ref)
		return
	}
	n.refNode = p.parse(ptr, target)
}

// lookupPointer finds the value at JSON pointer ptr (RFC 6901, with
// percent-encoding already removed from the fragment) and returns it with
// its canonical pointer.
func lookupPointer(doc gjson.Result, ptr string) (gjson.Result, string, bool) {
	if ptr == "" {
		return doc, "", true
	}
	cur := doc
	var canon strings.Builder
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(unescapePercent(tok), "~1", "/"), "~0", "~")
		var next gjson.Result
		found := false
		switch {
		case cur.IsObject():
			cur.ForEach(func(k, v gjson.Result) bool {
				if k.String() == tok {
					next, found = v, true
					return false
				}
				return true
			})
		case cur.IsArray():
			i, err := strconv.Atoi(tok)
			if err == nil && i >= 0 {
				j := 0
				cur.ForEach(func(_, v gjson.Result) bool {
					if j == i {
						next, found = v, true
						return false
					}
					j++
					return true
				})
			}
		}
		if !found {
			return gjson.Result{}, "", false
		}
		canon.WriteString("/" + escapePointer(tok))
		cur = next
	}
	return cur, canon.String(), true
}

func unescapePercent(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+3], 16, 8); err == nil {
				b.WriteByte(byte(v))
				i += 2
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

func numberPtr(v gjson.Result, invalid *[]string, key string) *float64 {
	if v.Type != gjson.Number {
		*invalid = append(*invalid, key+" must be a number")
		return nil
	}
	f := v.Float()
	return &f
}

func countPtr(v gjson.Result, invalid *[]string, key string) *int64 {
	f := v.Float()
	if v.Type != gjson.Number || f < 0 || f != math.Trunc(f) {
		*invalid = append(*invalid, key+" must be a non-negative integer")
		return nil
	}
	i := v.Int()
	return &i
}

// decodeValue decodes a JSON value for comparisons (numbers as
// json.Number).
func decodeValue(raw string) any {
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil
	}
	return v
}
