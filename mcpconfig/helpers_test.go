package mcpconfig

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/mcpconfig/golden")

const setupsDir = "../testdata/mcpconfig/setups"

// fixture is one setup of testdata/mcpconfig/setups copied into a temporary
// directory: root/home, root/work/project (and its parent root/work),
// root/extra/*.json, root/etc/managed-mcp.json, root/env.
type fixture struct {
	root string
	env  map[string]string
	opts Options
}

// newFixture copies setup name into a fresh directory, replacing @ROOT@ in
// every file with that directory.
func newFixture(t testing.TB, name string) *fixture {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(setupsDir, name)
	err = filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		dst := filepath.Join(root, rel)
		if info.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, bytes.ReplaceAll(data, []byte("@ROOT@"), []byte(root)), 0o644)
	})
	if err != nil {
		t.Fatalf("copy setup %s: %v", name, err)
	}
	// The layout always has the project and home folders, also where the
	// setup has no file in them (git keeps no empty folder).
	for _, dir := range []string{"home", "work/project"} {
		if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	f := &fixture{root: root, env: map[string]string{}}
	if data, err := os.ReadFile(filepath.Join(root, "env")); err == nil {
		sc := bufio.NewScanner(bytes.NewReader(data))
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), "="); ok {
				f.env[k] = v
			}
		}
	}
	extra, _ := filepath.Glob(filepath.Join(root, "extra", "*.json"))
	sort.Strings(extra)
	f.opts = Options{
		HomeDir:     filepath.Join(root, "home"),
		ProjectDir:  filepath.Join(root, "work", "project"),
		ManagedPath: filepath.Join(root, "etc", "managed-mcp.json"),
		Extra:       extra,
		Env:         f.lookup,
		// The fixtures' golden files list every active server in
		// allowedTools (serve --allow-mcp-tools).
		AllowServerTools: true,
	}
	return f
}

func (f *fixture) lookup(k string) (string, bool) { v, ok := f.env[k]; return v, ok }

func (f *fixture) path(rel string) string { return filepath.Join(f.root, filepath.FromSlash(rel)) }

func (f *fixture) write(t testing.TB, rel, content string) {
	t.Helper()
	p := f.path(rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) resolve(t testing.TB) *Config {
	t.Helper()
	cfg, err := Resolve(f.opts)
	if err != nil {
		t.Fatalf("Resolve: %v", err)
	}
	return cfg
}

// checkGolden compares got (JSON) with testdata/mcpconfig/golden/name,
// semantically; -update rewrites the file.
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("..", "testdata", "mcpconfig", "golden", name)
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, got, "", "  "); err != nil {
		t.Fatalf("golden %s: output is not JSON: %v\n%s", name, err, got)
	}
	pretty.WriteByte('\n')
	if *update {
		if err := os.WriteFile(path, pretty.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden %s: %v (run go test -update)", name, err)
	}
	var a, b any
	if err := json.Unmarshal(want, &a); err != nil {
		t.Fatalf("golden %s: %v", name, err)
	}
	_ = json.Unmarshal(got, &b)
	aj, _ := json.Marshal(a)
	bj, _ := json.Marshal(b)
	if !bytes.Equal(aj, bj) {
		t.Errorf("%s differs from the golden file (go test -update rewrites it); got:\n%s", name, pretty.Bytes())
	}
}
