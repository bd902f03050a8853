package probe

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tidwall/gjson"
)

// Codes of argument errors (FieldError.Code), as the SPEC lists
// them for mcp_invalid_arguments.
const (
	ParamRequired           = "PARAMETER_REQUIRED"            // a required property is missing
	ParamInvalidType        = "PARAMETER_INVALID_TYPE"        // the value is of the wrong JSON type
	ParamConstraintViolated = "PARAMETER_CONSTRAINT_VIOLATED" // a bound, length, pattern, uniqueness, unknown key, ...
	ParamEnumInvalid        = "PARAMETER_ENUM_INVALID"        // not one of enum (or not const)
)

const (
	maxFieldErrors           = 100
	maxShownEnum             = 10
	maxShownValue            = 60
	maxUniqueItemsCheckItems = 2000
)

// Validate checks tool arguments (a JSON object; empty or null counts as
// {}) against the schema and returns one error per problem, in a stable
// order: required properties first, then properties in schema order, then
// other keys sorted. Paths are relative to the arguments object, e.g.
// "filters[2].key"; errors about the object as a whole have Path RootPath.
// Messages do not repeat the path. At most 100 errors are returned; the last
// one then says how many more there were. Nil means the arguments are valid.
//
// Keywords are applied as JSON Schema 2020-12 does, except "format" (an
// annotation only) and those that Parameter.Unsupported lists as "not
// checked".
func (s *ToolSchema) Validate(args json.RawMessage) []FieldError {
	args = bytes.TrimSpace(args)
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	var val any
	if err := dec.Decode(&val); err != nil || dec.More() {
		return []FieldError{{Path: RootPath, Code: ParamInvalidType, Message: "the arguments are not valid JSON"}}
	}
	if _, ok := val.(map[string]any); !ok {
		return []FieldError{{Path: RootPath, Code: ParamInvalidType, Message: "the arguments must be an object, got " + kindName(val)}}
	}
	v := &validator{}
	v.check(s.root, val, "", 0)
	return v.result()
}

type validator struct {
	errs    []FieldError
	dropped int
}

func (v *validator) add(path, code, format string, args ...any) {
	if path == "" {
		path = RootPath
	}
	if len(v.errs) >= maxFieldErrors-1 {
		v.dropped++
		return
	}
	v.errs = append(v.errs, FieldError{Path: path, Code: code, Message: fmt.Sprintf(format, args...)})
}

func (v *validator) result() []FieldError {
	if v.dropped > 0 {
		v.errs = append(v.errs, FieldError{Path: RootPath, Code: ParamConstraintViolated,
			Message: fmt.Sprintf("and %d more problems", v.dropped)})
	}
	return v.errs
}

// try checks val against n on the side and returns the errors.
func try(n *schemaNode, val any, path string, depth int) []FieldError {
	sub := &validator{}
	sub.check(n, val, path, depth)
	return sub.errs
}

func (v *validator) check(n *schemaNode, val any, path string, depth int) {
	if depth > maxValidateDepth {
		v.add(path, ParamConstraintViolated, "nested too deeply to check (more than %d levels)", maxValidateDepth)
		return
	}
	if n.boolSchema != nil {
		if !*n.boolSchema {
			v.add(path, ParamConstraintViolated, "no value is allowed here")
		}
		return
	}
	if n.refNode != nil {
		v.check(n.refNode, val, path, depth+1)
	}
	if !v.checkType(n, val, path) {
		return
	}
	if n.enum != nil && !slices.ContainsFunc(n.enumVals, func(e any) bool { return jsonEqual(e, val) }) {
		v.add(path, ParamEnumInvalid, "must be one of %s, got %s", showValues(n.enumVals), showValue(val))
	} else if n.hasConst && !jsonEqual(n.constVal, val) {
		v.add(path, ParamEnumInvalid, "must be %s, got %s", showValue(n.constVal), showValue(val))
	}
	switch x := val.(type) {
	case string:
		v.checkString(n, x, path)
	case json.Number:
		v.checkNumber(n, x, path)
	case []any:
		v.checkArray(n, x, path, depth)
	case map[string]any:
		v.checkObject(n, x, path, depth)
	}
	for _, a := range n.allOf {
		v.check(a, val, path, depth+1)
	}
	if n.anyOf != nil {
		v.alternatives(n.anyOf, val, path, depth, false)
	}
	if n.oneOf != nil {
		v.alternatives(n.oneOf, val, path, depth, true)
	}
	if n.not != nil && len(try(n.not, val, path, depth+1)) == 0 {
		v.add(path, ParamConstraintViolated, "must not match the schema under \"not\"")
	}
	if n.ifS != nil {
		if len(try(n.ifS, val, path, depth+1)) == 0 {
			if n.thenS != nil {
				v.check(n.thenS, val, path, depth+1)
			}
		} else if n.elseS != nil {
			v.check(n.elseS, val, path, depth+1)
		}
	}
}

// checkType reports whether val has one of n's types (or n has none).
func (v *validator) checkType(n *schemaNode, val any, path string) bool {
	if val == nil && n.nullable {
		return true
	}
	if len(n.types) == 0 {
		return true
	}
	for _, t := range n.types {
		if typeMatches(t, val) {
			return true
		}
	}
	names := make([]string, len(n.types))
	for i, t := range n.types {
		names[i] = typeName(t)
	}
	got := kindName(val)
	if num, ok := val.(json.Number); ok && slices.Contains(n.types, "integer") {
		got = "the number " + num.String()
	}
	v.add(path, ParamInvalidType, "must be %s, got %s", strings.Join(names, " or "), got)
	return false
}

func (v *validator) checkString(n *schemaNode, s, path string) {
	l := int64(utf8.RuneCountInString(s))
	if n.minLength != nil && l < *n.minLength {
		v.add(path, ParamConstraintViolated, "must be at least %d characters long, got %d", *n.minLength, l)
	}
	if n.maxLength != nil && l > *n.maxLength {
		v.add(path, ParamConstraintViolated, "must be at most %d characters long, got %d", *n.maxLength, l)
	}
	if n.re != nil && !n.re.MatchString(s) {
		v.add(path, ParamConstraintViolated, "must match the pattern %s", n.pattern)
	}
}

func (v *validator) checkNumber(n *schemaNode, num json.Number, path string) {
	f, err := strconv.ParseFloat(num.String(), 64)
	if err != nil && !math.IsInf(f, 0) {
		v.add(path, ParamInvalidType, "must be a number, got %s", num)
		return
	}
	if n.minimum != nil && f < *n.minimum {
		v.add(path, ParamConstraintViolated, "must be at least %s, got %s", fmtNum(*n.minimum), num)
	}
	if n.maximum != nil && f > *n.maximum {
		v.add(path, ParamConstraintViolated, "must be at most %s, got %s", fmtNum(*n.maximum), num)
	}
	if n.exclMin != nil && f <= *n.exclMin {
		v.add(path, ParamConstraintViolated, "must be greater than %s, got %s", fmtNum(*n.exclMin), num)
	}
	if n.exclMax != nil && f >= *n.exclMax {
		v.add(path, ParamConstraintViolated, "must be less than %s, got %s", fmtNum(*n.exclMax), num)
	}
	if n.multipleOf != nil {
		q := f / *n.multipleOf
		if math.IsInf(q, 0) || math.Abs(q-math.Round(q)) > 1e-9*math.Max(1, math.Abs(q)) {
			v.add(path, ParamConstraintViolated, "must be a multiple of %s, got %s", fmtNum(*n.multipleOf), num)
		}
	}
}

func (v *validator) checkArray(n *schemaNode, arr []any, path string, depth int) {
	l := int64(len(arr))
	if n.minItems != nil && l < *n.minItems {
		v.add(path, ParamConstraintViolated, "must have at least %d items, got %d", *n.minItems, l)
	}
	if n.maxItems != nil && l > *n.maxItems {
		v.add(path, ParamConstraintViolated, "must have at most %d items, got %d", *n.maxItems, l)
	}
	for i, el := range arr {
		var s *schemaNode
		switch {
		case i < len(n.prefixItems):
			s = n.prefixItems[i]
		case n.items != nil && len(n.prefixItems) == 0:
			s = n.items
		case n.items != nil:
			s = n.items // 2020-12: items applies after prefixItems
		case n.additionalItems != nil && len(n.prefixItems) > 0:
			s = n.additionalItems
		}
		if s != nil {
			v.check(s, el, path+"["+strconv.Itoa(i)+"]", depth+1)
		}
	}
	if n.uniqueItems && len(arr) <= maxUniqueItemsCheckItems {
		seen := make(map[string]int, len(arr))
		for i, el := range arr {
			k := canonical(el)
			if j, ok := seen[k]; ok {
				v.add(path, ParamConstraintViolated, "items must be unique: items %d and %d are equal", j, i)
				break
			}
			seen[k] = i
		}
	}
}

func (v *validator) checkObject(n *schemaNode, obj map[string]any, path string, depth int) {
	for _, r := range n.required {
		if _, ok := obj[r]; !ok {
			v.add(joinParamPath(path, r), ParamRequired, "is required")
		}
	}
	known := make(map[string]bool, len(n.props))
	for _, p := range n.props {
		known[p.name] = true
		if val, ok := obj[p.name]; ok {
			v.check(p.node, val, joinParamPath(path, p.name), depth+1)
		}
	}
	var extra []string
	for k := range obj {
		if !known[k] {
			extra = append(extra, k)
		}
	}
	sort.Strings(extra)
	// patternProperties is not supported: with it, other keys are not judged.
	if n.additional != nil && !slices.Contains(n.unknownChecks, "patternProperties") {
		for _, k := range extra {
			if b := n.additional.boolSchema; b != nil && !*b {
				names := make([]string, 0, len(n.props))
				for _, p := range n.props {
					names = append(names, p.name)
				}
				msg := "is not a parameter of this tool"
				if len(names) > 0 {
					msg += "; known: " + truncateList(names, 20)
				}
				v.add(joinParamPath(path, k), ParamConstraintViolated, "%s", msg)
				continue
			}
			v.check(n.additional, obj[k], joinParamPath(path, k), depth+1)
		}
	}
	l := int64(len(obj))
	if n.minProps != nil && l < *n.minProps {
		v.add(path, ParamConstraintViolated, "must have at least %d properties, got %d", *n.minProps, l)
	}
	if n.maxProps != nil && l > *n.maxProps {
		v.add(path, ParamConstraintViolated, "must have at most %d properties, got %d", *n.maxProps, l)
	}
}

// alternatives applies anyOf (one=false) or oneOf (one=true). When no
// branch matches, the errors of the closest branch (one whose type fits)
// are reported; when none fits, one type error lists the alternatives.
func (v *validator) alternatives(list []*schemaNode, val any, path string, depth int, one bool) {
	matches := 0
	var best []FieldError
	bestFits := false
	for _, br := range list {
		errs := try(br, val, path, depth+1)
		if len(errs) == 0 {
			matches++
			if !one {
				return
			}
			continue
		}
		fits := !slices.ContainsFunc(errs, func(e FieldError) bool {
			return e.Code == ParamInvalidType && (e.Path == path || e.Path == RootPath && path == "")
		})
		if best == nil || fits && !bestFits || fits == bestFits && len(errs) < len(best) {
			best, bestFits = errs, fits
		}
	}
	switch {
	case matches == 1 || matches > 1 && !one:
		return
	case matches > 1:
		v.add(path, ParamConstraintViolated, "matches %d of the alternatives, but must match exactly one (oneOf)", matches)
	case bestFits:
		for _, e := range best {
			v.add(e.Path, e.Code, "%s", e.Message)
		}
	default:
		var kinds []string
		for _, br := range list {
			k := describeBranch(br)
			if !slices.Contains(kinds, k) {
				kinds = append(kinds, k)
			}
		}
		v.add(path, ParamInvalidType, "must be %s, got %s", strings.Join(kinds, " or "), kindName(val))
	}
}

func describeBranch(n *schemaNode) string {
	if n.refNode != nil && len(n.types) == 0 {
		n = n.refNode
	}
	if n.hasConst {
		return showValue(n.constVal)
	}
	if len(n.types) > 0 {
		names := make([]string, len(n.types))
		for i, t := range n.types {
			names[i] = typeName(t)
		}
		return strings.Join(names, " or ")
	}
	if n.enum != nil {
		return "one of " + showValues(n.enumVals)
	}
	return "a matching value"
}

func typeMatches(t string, val any) bool {
	switch x := val.(type) {
	case nil:
		return t == "null"
	case bool:
		return t == "boolean"
	case string:
		return t == "string"
	case json.Number:
		if t == "number" {
			return true
		}
		return t == "integer" && isIntegral(x)
	case []any:
		return t == "array"
	case map[string]any:
		return t == "object"
	}
	return false
}

func isIntegral(n json.Number) bool {
	if _, err := strconv.ParseInt(n.String(), 10, 64); err == nil {
		return true
	}
	f, err := strconv.ParseFloat(n.String(), 64)
	return err == nil && f == math.Trunc(f)
}

// valueKind is the JSON Schema type of a decoded value ("integer" for
// integral numbers), or of a gjson value (never "integer").
func valueKind(val any) string {
	switch x := val.(type) {
	case gjson.Result:
		switch {
		case x.Type == gjson.Null:
			return "null"
		case x.IsBool():
			return "boolean"
		case x.Type == gjson.Number:
			return "number"
		case x.Type == gjson.String:
			return "string"
		case x.IsArray():
			return "array"
		case x.IsObject():
			return "object"
		}
		return "any"
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case json.Number:
		if isIntegral(x) {
			return "integer"
		}
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return "any"
}

// kindName names the JSON type of val (see valueKind) for a message:
// "a string", "an array", "null".
func kindName(val any) string {
	k := valueKind(val)
	if k == "integer" {
		k = "number"
	}
	return typeName(k)
}

func typeName(t string) string {
	switch t {
	case "null":
		return "null"
	case "integer", "object", "array":
		return "an " + t
	}
	return "a " + t
}

// jsonEqual compares decoded JSON values, numbers by value.
func jsonEqual(a, b any) bool { return canonical(a) == canonical(b) }

// canonical encodes a decoded value with sorted keys and numbers in one
// spelling, so equal values encode equally.
func canonical(val any) string {
	var b strings.Builder
	var enc func(any)
	enc = func(val any) {
		switch x := val.(type) {
		case json.Number:
			if f, err := strconv.ParseFloat(x.String(), 64); err == nil {
				b.WriteString(strconv.FormatFloat(f, 'g', -1, 64))
			} else {
				b.WriteString(x.String())
			}
		case []any:
			b.WriteByte('[')
			for i, e := range x {
				if i > 0 {
					b.WriteByte(',')
				}
				enc(e)
			}
			b.WriteByte(']')
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			b.WriteByte('{')
			for i, k := range keys {
				if i > 0 {
					b.WriteByte(',')
				}
				q, _ := json.Marshal(k)
				b.Write(q)
				b.WriteByte(':')
				enc(x[k])
			}
			b.WriteByte('}')
		default:
			q, _ := json.Marshal(x)
			b.Write(q)
		}
	}
	enc(val)
	return b.String()
}

// showValue spells a value for a message, shortened.
func showValue(val any) string { return truncateText(canonical(val), maxShownValue) }

func showValues(vals []any) string {
	parts := make([]string, 0, len(vals))
	for _, e := range vals {
		parts = append(parts, showValue(e))
	}
	return truncateList(parts, maxShownEnum)
}

func truncateList(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, ", ")
	}
	return strings.Join(items[:n], ", ") + fmt.Sprintf(", … (%d more)", len(items)-n)
}
