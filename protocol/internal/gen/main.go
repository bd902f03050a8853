// Command gen writes the files of package protocol that are generated from
// its Go types: the JSON Schemas schema/*.json and the TypeScript types
// ts/protocol.gen.ts. Run it with `go generate ./protocol` (see
// generate.go); TestGeneratedFilesAreCurrent fails when they are stale.
//
// The TypeScript is made from the schemas by json-schema-to-typescript
// (json2ts), pinned in scripts/test.sh and installed into $CCPROXY_DEPS
// (default: .deps at the repository's root).
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ccproxy/ccproxy/internal/testkit"
	"github.com/ccproxy/ccproxy/protocol"
	"github.com/ccproxy/ccproxy/protocol/internal/tsgen"
)

func main() {
	dir := flag.String("dir", ".", "the protocol directory to write into")
	json2ts := flag.String("json2ts", "", "the json2ts binary (default: $CCPROXY_DEPS/node_modules/.bin/json2ts)")
	noTS := flag.Bool("no-ts", false, "write the schemas only")
	flag.Parse()
	if err := run(*dir, *json2ts, *noTS); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(dir, json2ts string, noTS bool) error {
	files, err := protocol.SchemaFiles()
	if err != nil {
		return err
	}
	schemaDir := filepath.Join(dir, "schema")
	if err := os.MkdirAll(schemaDir, 0o755); err != nil {
		return err
	}
	old, err := filepath.Glob(filepath.Join(schemaDir, "*.json"))
	if err != nil {
		return err
	}
	for _, f := range old { // a schema no type makes any more goes
		if _, ok := files[filepath.Base(f)]; !ok {
			if err := os.Remove(f); err != nil {
				return err
			}
		}
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(schemaDir, name), b, 0o644); err != nil {
			return err
		}
	}
	if noTS {
		return nil
	}
	if json2ts == "" {
		if json2ts, err = testkit.NodeBinPath("json2ts"); err != nil {
			return fmt.Errorf("json2ts not found (scripts/test.sh installs it): %w", err)
		}
	}
	if v, err := tsgen.InstalledVersion(json2ts); err != nil || v != tsgen.Version {
		return fmt.Errorf("%s is json-schema-to-typescript %q (%v), want %s (scripts/test.sh installs it)", json2ts, v, err, tsgen.Version)
	}
	bundle, err := tsgen.Schema()
	if err != nil {
		return err
	}
	ts, err := tsgen.Generate(json2ts, bundle, tsgen.Imports())
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "ts", tsgen.OutputFile), ts, 0o644)
}
