package protocol

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const regenerate = "run `go generate ./protocol` (with $CCPROXY_DEPS set, for json2ts) and commit the result"

// TestGeneratedSchemasAreCurrent regenerates the JSON Schemas from the Go
// types and compares them byte for byte with schema/*.json.
func TestGeneratedSchemasAreCurrent(t *testing.T) {
	want, err := SchemaFiles()
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join("schema", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if _, ok := want[filepath.Base(f)]; !ok {
			t.Errorf("%s is not generated from any Go type: remove it (%s)", f, regenerate)
		}
	}
	for _, name := range sortedKeys(want) {
		got, err := os.ReadFile(filepath.Join("schema", name))
		if err != nil {
			t.Errorf("schema/%s: %v (%s)", name, err, regenerate)
			continue
		}
		if !bytes.Equal(got, want[name]) {
			t.Errorf("schema/%s is stale: it differs from what the Go types give at line %d; %s", name, firstDiffLine(got, want[name]), regenerate)
		}
	}
}

func firstDiffLine(a, b []byte) int {
	al, bl := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	for i := range min(len(al), len(bl)) {
		if al[i] != bl[i] {
			return i + 1
		}
	}
	return min(len(al), len(bl)) + 1
}

// TestSchemaTagErrors: a schema tag the generator does not understand
// fails generation instead of dropping a constraint.
func TestSchemaTagErrors(t *testing.T) {
	type typo struct {
		Name string `json:"name" schema:"minLenght=1"`
	}
	type badNumber struct {
		N int `json:"n" schema:"maximum=lots"`
	}
	g := newGenerator("defs.json#/$defs/", fileDefs())
	if _, err := g.schemaOf(reflect.TypeFor[typo]()); err == nil || !strings.Contains(err.Error(), `unknown schema tag item "minLenght=1"`) {
		t.Errorf("typo in a schema tag: %v", err)
	}
	if _, err := g.schemaOf(reflect.TypeFor[badNumber]()); err == nil || !strings.Contains(err.Error(), `maximum=lots`) {
		t.Errorf("bad number in a schema tag: %v", err)
	}
}
