package protocol_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/ccproxy/ccproxy/internal/testkit"
	"github.com/ccproxy/ccproxy/protocol"
	"github.com/ccproxy/ccproxy/protocol/internal/tsgen"
)

// TestGeneratedTypeScriptIsCurrent regenerates ts/protocol.gen.ts with the
// pinned json2ts and compares it byte for byte.
func TestGeneratedTypeScriptIsCurrent(t *testing.T) {
	json2ts := testkit.NodeBin(t, "json2ts")
	if v, err := tsgen.InstalledVersion(json2ts); err != nil || v != tsgen.Version {
		t.Fatalf("json2ts is json-schema-to-typescript %q (%v), want %s as scripts/test.sh pins it", v, err, tsgen.Version)
	}
	bundle, err := tsgen.Schema()
	if err != nil {
		t.Fatal(err)
	}
	want, err := tsgen.Generate(json2ts, bundle, tsgen.Imports())
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join("ts", tsgen.OutputFile))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("ts/%s is stale: it differs from what the schemas give at line %d; %s", tsgen.OutputFile, protocol.FirstDiffLine(got, want), protocol.Regenerate)
	}
}
