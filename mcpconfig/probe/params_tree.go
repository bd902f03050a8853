package probe

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// RootPath is the Parameter.Path and FieldError.Path of the arguments
// object as a whole (used when the schema's top level is not a plain object
// with properties, and for errors about the whole object).
const RootPath = "$"

// Parameters returns the parameter tree: one Parameter per property of the
// arguments object, in schema order. When the top level is not a plain
// object (an anyOf of objects, say), it returns one Parameter named
// "arguments" with Path RootPath. The slices are fresh copies.
func (s *ToolSchema) Parameters() []Parameter {
	out := make([]Parameter, len(s.params))
	for i, p := range s.params {
		out[i] = cloneParam(p)
	}
	return out
}

func cloneParam(p Parameter) Parameter {
	if p.Items != nil {
		it := cloneParam(*p.Items)
		p.Items = &it
	}
	for _, l := range []*[]Parameter{&p.Properties, &p.AnyOf, &p.OneOf} {
		if *l != nil {
			c := make([]Parameter, len(*l))
			for i, q := range *l {
				c[i] = cloneParam(q)
			}
			*l = c
		}
	}
	p.Enum = slices.Clone(p.Enum)
	return p
}

// treeBuilder turns parsed nodes into the parameter tree.
type treeBuilder struct {
	count int
}

// flat is a node with its $ref target and allOf members merged in: what the
// tree shows of it.
type flat struct {
	schemaNode
	notes []string
	cut   string // non-empty when a $ref cycle stopped the expansion
}

func (b *treeBuilder) root(n *schemaNode, notes []string) ([]Parameter, []string) {
	f := b.flatten(n, nil)
	notes = append(notes, f.notes...)
	objectish := slices.Contains(f.types, "object") || (len(f.types) == 0 && (f.hasProps || len(f.required) > 0))
	if f.boolSchema != nil || !objectish || len(f.anyOf) > 0 || len(f.oneOf) > 0 || f.cut != "" {
		if f.boolSchema != nil && *f.boolSchema && len(notes) == 0 {
			return []Parameter{}, notes // true: any arguments, nothing to describe
		}
		return []Parameter{b.param(n, "arguments", RootPath, true, 0, nil)}, notes
	}
	stack := []*schemaNode{n}
	if n.refNode != nil {
		stack = append(stack, n.refNode)
	}
	params, objNotes := b.properties(&f, "", 1, stack)
	notes = append(notes, objNotes...)
	notes = append(notes, b.constraintNotes(&f, "object")...)
	if params == nil {
		params = []Parameter{}
	}
	return params, notes
}

// flatten merges n's $ref target and allOf members into one view. stack
// holds the nodes being expanded on the way here, to cut $ref cycles.
func (b *treeBuilder) flatten(n *schemaNode, stack []*schemaNode) flat {
	f := flat{schemaNode: *n}
	f.invalid = slices.Clone(n.invalid)
	f.unknownChecks = slices.Clone(n.unknownChecks)
	f.props = slices.Clone(n.props)
	f.required = slices.Clone(n.required)
	f.allOf = nil
	f.ref, f.refNode = "", nil
	seen := map[*schemaNode]bool{n: true}
	var merge func(m *schemaNode, depth int)
	mergeRef := func(from *schemaNode, depth int) {
		if from.refErr != "" {
			f.notes = append(f.notes, from.refErr+"; this part accepts anything")
			return
		}
		t := from.refNode
		if t == nil {
			return
		}
		if slices.Contains(stack, t) || seen[t] {
			if f.cut == "" {
				f.cut = fmt.Sprintf("recursive $ref %q: its content is shown once, further up", from.ref)
			}
			if len(f.types) == 0 {
				f.types = slices.Clone(t.types)
			}
			return
		}
		seen[t] = true
		merge(t, depth+1)
	}
	merge = func(m *schemaNode, depth int) {
		if depth > maxParamDepth {
			f.notes = append(f.notes, "allOf/$ref nested too deeply; the rest is not shown")
			return
		}
		if m != n {
			f.absorb(m)
		}
		if m.ref != "" {
			mergeRef(m, depth)
		}
		for _, a := range m.allOf {
			if seen[a] {
				continue
			}
			seen[a] = true
			merge(a, depth+1)
		}
	}
	merge(n, 0)
	return f
}

// absorb merges the keywords of m into f where f has none of its own;
// properties and required names are united, types intersected.
func (f *flat) absorb(m *schemaNode) {
	if m.boolSchema != nil {
		if !*m.boolSchema {
			f.notes = append(f.notes, "allOf includes false: no value is allowed")
		}
		return
	}
	if len(m.types) > 0 {
		if len(f.types) == 0 {
			f.types = slices.Clone(m.types)
		} else {
			var both []string
			for _, t := range f.types {
				if slices.Contains(m.types, t) || (t == "integer" && slices.Contains(m.types, "number")) {
					both = append(both, t)
				} else if t == "number" && slices.Contains(m.types, "integer") {
					both = append(both, "integer")
				}
			}
			if len(both) == 0 {
				f.notes = append(f.notes, fmt.Sprintf("allOf requires types %s and %s at once: no value is allowed", strings.Join(f.types, "|"), strings.Join(m.types, "|")))
			} else {
				f.types = both
			}
		}
	}
	f.nullable = f.nullable || m.nullable
	setStr := func(dst *string, v string) {
		if *dst == "" {
			*dst = v
		}
	}
	setStr(&f.descr, m.descr)
	setStr(&f.title, m.title)
	setStr(&f.format, m.format)
	if f.def == nil {
		f.def = m.def
	}
	if f.enum == nil && m.enum != nil {
		f.enum, f.enumVals = m.enum, m.enumVals
	} else if f.enum != nil && m.enum != nil {
		f.notes = append(f.notes, "allOf combines several enums; the first is shown, all are checked")
	}
	if !f.hasConst && m.hasConst {
		f.hasConst, f.constRaw, f.constVal = true, m.constRaw, m.constVal
	}
	for _, pair := range []struct{ dst, src **float64 }{
		{&f.minimum, &m.minimum}, {&f.maximum, &m.maximum}, {&f.exclMin, &m.exclMin}, {&f.exclMax, &m.exclMax}, {&f.multipleOf, &m.multipleOf},
	} {
		if *pair.dst == nil {
			*pair.dst = *pair.src
		}
	}
	for _, pair := range []struct{ dst, src **int64 }{
		{&f.minLength, &m.minLength}, {&f.maxLength, &m.maxLength}, {&f.minItems, &m.minItems},
		{&f.maxItems, &m.maxItems}, {&f.minProps, &m.minProps}, {&f.maxProps, &m.maxProps},
	} {
		if *pair.dst == nil {
			*pair.dst = *pair.src
		}
	}
	if f.pattern == "" {
		f.pattern, f.re, f.patternErr = m.pattern, m.re, m.patternErr
	}
	f.uniqueItems = f.uniqueItems || m.uniqueItems
	if f.items == nil {
		f.items = m.items
	}
	if f.prefixItems == nil {
		f.prefixItems = m.prefixItems
	}
	f.hasItems = f.hasItems || m.hasItems
	f.hasProps = f.hasProps || m.hasProps
	for _, p := range m.props {
		if !slices.ContainsFunc(f.props, func(q schemaProp) bool { return q.name == p.name }) {
			f.props = append(f.props, p)
		}
	}
	for _, r := range m.required {
		if !slices.Contains(f.required, r) {
			f.required = append(f.required, r)
		}
	}
	if f.additional == nil {
		f.additional = m.additional
	}
	switch {
	case f.anyOf == nil:
		f.anyOf = m.anyOf
	case m.anyOf != nil:
		f.notes = append(f.notes, "allOf combines several anyOf lists; the first is shown, all are checked")
	}
	switch {
	case f.oneOf == nil:
		f.oneOf = m.oneOf
	case m.oneOf != nil:
		f.notes = append(f.notes, "allOf combines several oneOf lists; the first is shown, all are checked")
	}
	if m.not != nil || m.ifS != nil {
		f.notes = append(f.notes, "not / if-then-else inside allOf: checked when calling, not shown")
	}
	f.unknownChecks = append(f.unknownChecks, m.unknownChecks...)
	f.invalid = append(f.invalid, m.invalid...)
}

// param builds the Parameter of node n.
func (b *treeBuilder) param(n *schemaNode, name, path string, required bool, depth int, stack []*schemaNode) Parameter {
	b.count++
	p := Parameter{Name: name, Path: path, Required: required}
	if depth > maxParamDepth || b.count > maxParams {
		p.Type = simpleType(n)
		if depth > maxParamDepth {
			p.Unsupported = fmt.Sprintf("not expanded: nested more than %d levels deep", maxParamDepth)
		} else {
			p.Unsupported = fmt.Sprintf("not expanded: the schema has more than %d parameters", maxParams)
		}
		return p
	}
	f := b.flatten(n, stack)
	stack = append(stack[:len(stack):len(stack)], n)
	if n.refNode != nil {
		stack = append(stack, n.refNode)
	}
	notes := slices.Clone(f.notes)

	if f.boolSchema != nil {
		p.Type = "any"
		if !*f.boolSchema {
			notes = append(notes, "the schema is false: no value is allowed")
		}
		p.Unsupported = strings.Join(notes, "; ")
		return p
	}

	p.Description = f.descr
	if p.Description == "" {
		p.Description = f.title
	}
	p.Default = f.def
	p.Format = f.format
	if f.enum != nil {
		p.Enum = f.enum
	} else if f.hasConst {
		p.Enum = []json.RawMessage{f.constRaw}
	}

	var nonNull []string
	for _, t := range f.types {
		if t == "null" {
			p.Nullable = true
		} else if !slices.Contains(nonNull, t) {
			nonNull = append(nonNull, t)
		}
	}
	p.Nullable = p.Nullable || f.nullable

	if f.cut != "" {
		p.Type = "any"
		if len(nonNull) == 1 {
			p.Type = nonNull[0]
		}
		notes = append(notes, f.cut)
		p.Unsupported = strings.Join(notes, "; ")
		return p
	}

	// anyOf / oneOf: a {"type":"null"} branch makes the parameter nullable;
	// a single remaining branch is merged into the parameter.
	anyOf, anyNull := b.dropNull(f.anyOf, stack)
	oneOf, oneNull := b.dropNull(f.oneOf, stack)
	if anyNull || oneNull {
		p.Nullable = true
	}
	if len(nonNull) == 0 && len(f.props) == 0 && f.items == nil {
		var only *schemaNode
		switch {
		case len(anyOf) == 1 && len(oneOf) == 0 && f.anyOf != nil:
			only = anyOf[0]
			anyOf = nil
		case len(oneOf) == 1 && len(anyOf) == 0 && f.oneOf != nil:
			only = oneOf[0]
			oneOf = nil
		}
		if only != nil {
			return b.mergeOnly(p, only, &f, notes, depth, stack)
		}
	}
	for _, br := range anyOf {
		p.AnyOf = append(p.AnyOf, b.param(br, name, path, false, depth+1, stack))
	}
	for _, br := range oneOf {
		p.OneOf = append(p.OneOf, b.param(br, name, path, false, depth+1, stack))
	}

	switch {
	case len(nonNull) == 1:
		p.Type = nonNull[0]
	case len(nonNull) > 1:
		// Several types: one alternative per type, each with what applies.
		p.Type = "any"
		for _, t := range nonNull {
			one := f.schemaNode
			one.types = []string{t}
			one.anyOf, one.oneOf, one.allOf, one.ref, one.refNode = nil, nil, nil, "", nil
			q := b.fill(Parameter{Name: name, Path: path, Type: t}, &flat{schemaNode: one}, depth, stack)
			q.Description, q.Default, q.Format = "", nil, ""
			p.AnyOf = append(p.AnyOf, q)
		}
		p.Unsupported = strings.Join(notes, "; ")
		return p
	default:
		p.Type = inferType(&f, p.AnyOf, p.OneOf)
	}
	p = b.fill(p, &f, depth, stack)
	notes = append(notes, b.constraintNotes(&f, p.Type)...)
	if p.Unsupported != "" {
		notes = append(notes, p.Unsupported)
	}
	p.Unsupported = strings.Join(notes, "; ")
	return p
}

// mergeOnly is param for a schema whose only content is a single anyOf or
// oneOf branch (once a null branch is dropped): the branch is the
// parameter, with what the outer schema p says of it (description, default,
// enum, format) and the outer constraints' notes added.
func (b *treeBuilder) mergeOnly(p Parameter, only *schemaNode, f *flat, notes []string, depth int, stack []*schemaNode) Parameter {
	q := b.param(only, p.Name, p.Path, p.Required, depth, stack)
	q.Nullable = q.Nullable || p.Nullable
	if p.Description != "" {
		q.Description = p.Description
	}
	if p.Default != nil {
		q.Default = p.Default
	}
	if p.Enum != nil && q.Enum == nil {
		q.Enum = p.Enum
	}
	if p.Format != "" && q.Format == "" {
		q.Format = p.Format
	}
	notes = append(notes, b.constraintNotes(f, q.Type)...)
	if len(notes) > 0 {
		if q.Unsupported != "" {
			notes = append(notes, q.Unsupported)
		}
		q.Unsupported = strings.Join(notes, "; ")
	}
	return q
}

// fill sets the members of p that depend on its type: bounds, lengths,
// pattern, items and properties.
func (b *treeBuilder) fill(p Parameter, f *flat, depth int, stack []*schemaNode) Parameter {
	var notes []string
	typ := p.Type
	if typ == "number" || typ == "integer" || typ == "any" {
		p.Minimum, p.Maximum = f.minimum, f.maximum
		if f.exclMin != nil && (p.Minimum == nil || *f.exclMin >= *p.Minimum) {
			p.Minimum = f.exclMin
			notes = append(notes, fmt.Sprintf("exclusiveMinimum: must be greater than %s", fmtNum(*f.exclMin)))
		}
		if f.exclMax != nil && (p.Maximum == nil || *f.exclMax <= *p.Maximum) {
			p.Maximum = f.exclMax
			notes = append(notes, fmt.Sprintf("exclusiveMaximum: must be less than %s", fmtNum(*f.exclMax)))
		}
	}
	if typ == "string" || typ == "any" {
		p.MinLength, p.MaxLength = f.minLength, f.maxLength
		p.Pattern = f.pattern
		if f.patternErr != "" {
			notes = append(notes, f.patternErr)
		}
	}
	if typ == "array" || typ == "any" {
		if f.items != nil {
			it := b.param(f.items, p.Name, p.Path+"[]", false, depth+1, stack)
			p.Items = &it
		}
	}
	if typ == "object" || (typ == "any" && len(f.props) > 0) {
		props, pn := b.properties(f, p.Path, depth+1, stack)
		p.Properties = props
		notes = append(notes, pn...)
	}
	if len(notes) > 0 {
		if p.Unsupported != "" {
			notes = append([]string{p.Unsupported}, notes...)
		}
		p.Unsupported = strings.Join(notes, "; ")
	}
	return p
}

// properties builds the parameters of an object's properties.
func (b *treeBuilder) properties(f *flat, path string, depth int, stack []*schemaNode) ([]Parameter, []string) {
	var out []Parameter
	var notes []string
	for _, pr := range f.props {
		out = append(out, b.param(pr.node, pr.name, joinParamPath(path, pr.name), slices.Contains(f.required, pr.name), depth, stack))
	}
	var undescribed []string
	for _, r := range f.required {
		if !slices.ContainsFunc(f.props, func(q schemaProp) bool { return q.name == r }) {
			undescribed = append(undescribed, r)
		}
	}
	if len(undescribed) > 0 {
		notes = append(notes, "required but not described: "+strings.Join(undescribed, ", "))
	}
	return out, notes
}

// dropNull removes {"type":"null"} branches and reports whether there was
// one.
func (b *treeBuilder) dropNull(list []*schemaNode, stack []*schemaNode) ([]*schemaNode, bool) {
	var out []*schemaNode
	null := false
	for _, br := range list {
		f := b.flatten(br, stack)
		if len(f.types) == 1 && f.types[0] == "null" && f.cut == "" {
			null = true
			continue
		}
		out = append(out, br)
	}
	return out, null
}

// constraintNotes lists the keywords that are checked by Validate but have
// no place in a Parameter, and those neither shown nor checked.
func (b *treeBuilder) constraintNotes(f *flat, typ string) []string {
	var notes []string
	var checked []string
	if f.multipleOf != nil {
		checked = append(checked, "multipleOf "+fmtNum(*f.multipleOf))
	}
	if f.minItems != nil {
		checked = append(checked, "minItems "+strconv.FormatInt(*f.minItems, 10))
	}
	if f.maxItems != nil {
		checked = append(checked, "maxItems "+strconv.FormatInt(*f.maxItems, 10))
	}
	if f.uniqueItems {
		checked = append(checked, "uniqueItems")
	}
	if len(f.prefixItems) > 0 {
		checked = append(checked, fmt.Sprintf("a tuple of %d positional items", len(f.prefixItems)))
	}
	checked = append(checked, nonObjectNotes(f)...)
	if f.not != nil {
		checked = append(checked, "not")
	}
	if f.ifS != nil {
		checked = append(checked, "if/then/else")
	}
	if len(checked) > 0 {
		notes = append(notes, strings.Join(checked, ", ")+": checked when calling, not shown")
	}
	if len(f.unknownChecks) > 0 {
		notes = append(notes, strings.Join(f.unknownChecks, ", ")+": not supported, not checked")
	}
	for _, inv := range f.invalid {
		notes = append(notes, "invalid schema: "+inv)
	}
	return notes
}

// nonObjectNotes names the object keywords a Parameter cannot show.
func nonObjectNotes(f *flat) []string {
	var out []string
	if f.additional != nil && f.additional.boolSchema == nil {
		out = append(out, "additionalProperties (a schema for other keys)")
	}
	if f.minProps != nil {
		out = append(out, "minProperties "+strconv.FormatInt(*f.minProps, 10))
	}
	if f.maxProps != nil {
		out = append(out, "maxProperties "+strconv.FormatInt(*f.maxProps, 10))
	}
	return out
}

// inferType finds the type of a schema without "type".
func inferType(f *flat, anyOf, oneOf []Parameter) string {
	switch {
	case f.hasProps || len(f.required) > 0 || f.additional != nil || f.minProps != nil || f.maxProps != nil:
		return "object"
	case f.items != nil || len(f.prefixItems) > 0 || f.minItems != nil || f.maxItems != nil:
		return "array"
	case f.enum != nil:
		return valuesType(f.enumVals)
	case f.hasConst:
		return valuesType([]any{f.constVal})
	case f.minLength != nil || f.maxLength != nil || f.pattern != "":
		return "string"
	case f.minimum != nil || f.maximum != nil || f.exclMin != nil || f.exclMax != nil || f.multipleOf != nil:
		return "number"
	}
	alts := append(slices.Clone(anyOf), oneOf...)
	if len(alts) > 0 {
		t := alts[0].Type
		for _, a := range alts[1:] {
			if a.Type != t {
				return "any"
			}
		}
		return t
	}
	return "any"
}

// valuesType is the common JSON type of some values, or "any".
func valuesType(vals []any) string {
	t := ""
	for _, v := range vals {
		k := valueKind(v)
		if k == "null" {
			continue
		}
		if k == "integer" {
			k = "number"
		}
		if t != "" && t != k {
			return "any"
		}
		t = k
	}
	if t == "" {
		return "any"
	}
	return t
}

// simpleType is the type of a node without expanding it.
func simpleType(n *schemaNode) string {
	for _, t := range n.types {
		if t != "null" {
			return t
		}
	}
	if n.refNode != nil && n.refNode != n {
		for _, t := range n.refNode.types {
			if t != "null" {
				return t
			}
		}
	}
	return "any"
}

// joinParamPath appends key to path: "a.b", or a["x y"] for keys that are
// not plain identifiers.
func joinParamPath(path, key string) string {
	if path == RootPath {
		path = ""
	}
	if isIdent(key) {
		if path == "" {
			return key
		}
		return path + "." + key
	}
	q, _ := json.Marshal(key)
	return path + "[" + string(q) + "]"
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		switch {
		case c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		case i > 0 && (c >= '0' && c <= '9' || c == '-'):
		default:
			return false
		}
	}
	return true
}

func fmtNum(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
