package protocol

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ccproxy/ccproxy/internal/testkit"
)

// The npm package @ccproxy/client lives in ts/: package.json, the sources
// (index.ts, protocol.ts, protocol.gen.ts, client.ts), README.md, LICENSE, and Node tests in
// ts/test/ that drive a real `ccproxy serve --demo`.

// packageJSON is the part of ts/package.json the tests check.
type packageJSON struct {
	Name            string            `json:"name"`
	Version         string            `json:"version"`
	License         string            `json:"license"`
	Type            string            `json:"type"`
	Types           string            `json:"types"`
	Files           []string          `json:"files"`
	Engines         map[string]string `json:"engines"`
	Exports         map[string]any    `json:"exports"`
	Scripts         map[string]string `json:"scripts"`
	Dependencies    map[string]string `json:"dependencies"`
	PeerDeps        map[string]string `json:"peerDependencies"`
	OptionalDeps    map[string]string `json:"optionalDependencies"`
	DevDependencies map[string]string `json:"devDependencies"`
}

func readPackageJSON(t *testing.T) packageJSON {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("ts", "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	var pj packageJSON
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&pj); err != nil {
		t.Fatalf("ts/package.json: %v", err)
	}
	return pj
}

// TestClientPackageJSON checks ts/package.json without running npm: an ESM
// package with types and no runtime dependencies, whose dev dependencies are
// pinned to exactly the versions scripts/test.sh installs (the tests build
// and run with those), and whose LICENSE is the repository's.
func TestClientPackageJSON(t *testing.T) {
	pj := readPackageJSON(t)
	if pj.Name != "@ccproxy/client" {
		t.Errorf("name = %q, want @ccproxy/client", pj.Name)
	}
	if !regexp.MustCompile(`^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$`).MatchString(pj.Version) {
		t.Errorf("version = %q, want semver", pj.Version)
	}
	if pj.Type != "module" {
		t.Errorf(`type = %q, want "module" (ESM)`, pj.Type)
	}
	if pj.License != "MIT" {
		t.Errorf("license = %q, want MIT (the repository's LICENSE)", pj.License)
	}
	if pj.Engines["node"] != ">=18" {
		t.Errorf("engines.node = %q, want >=18", pj.Engines["node"])
	}
	if len(pj.Dependencies)+len(pj.PeerDeps)+len(pj.OptionalDeps) > 0 {
		t.Errorf("runtime dependencies %v %v %v: the package must have none", pj.Dependencies, pj.PeerDeps, pj.OptionalDeps)
	}
	if !slices.Equal(pj.Files, []string{"dist/"}) {
		t.Errorf("files = %q, want [dist/] (npm adds package.json, README and LICENSE)", pj.Files)
	}
	root, ok := pj.Exports["."].(map[string]any)
	if !ok || root["types"] != "./dist/index.d.ts" || root["default"] != "./dist/index.js" {
		t.Errorf(`exports["."] = %v, want {types: ./dist/index.d.ts, default: ./dist/index.js}`, pj.Exports["."])
	}

	script, err := os.ReadFile(filepath.Join("..", "scripts", "test.sh"))
	if err != nil {
		t.Fatal(err)
	}
	for name, version := range pj.DevDependencies {
		pin := `"` + name + "@" + version + `"`
		if !bytes.Contains(script, []byte(pin)) {
			t.Errorf("devDependencies %s %s: scripts/test.sh does not install %s", name, version, pin)
		}
	}
	for _, name := range []string{"typescript", "ws"} {
		if pj.DevDependencies[name] == "" {
			t.Errorf("devDependencies has no %s", name)
		}
	}

	want, err := os.ReadFile(filepath.Join("..", "LICENSE"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join("ts", "LICENSE"))
	if err != nil || !bytes.Equal(got, want) {
		t.Errorf("ts/LICENSE must be a copy of the repository's LICENSE (err %v)", err)
	}
}

// TestClientPackage builds @ccproxy/client with the pinned tsc, checks what
// `npm pack` would publish, and runs its Node tests (node --test) against a
// real `ccproxy serve --demo` built from this checkout. With CI=true a
// missing node, npm, tsc or ws fails the test.
func TestClientPackage(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		testkit.Missing(t, "node", err)
	}
	tsc := testkit.NodeBin(t, "tsc")
	deps, err := testkit.DepsDir()
	if err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(deps, "node_modules", "ws")
	if _, err := os.Stat(filepath.Join(ws, "package.json")); err != nil {
		testkit.Missing(t, "npm package ws", err)
	}
	bin, err := testkit.BuildCommand("github.com/ccproxy/ccproxy/cmd/ccproxy")
	if err != nil {
		t.Fatalf("building ccproxy: %v", err)
	}

	// Build a copy, so that the test writes nothing into the source tree.
	dir := t.TempDir()
	copyPackage(t, "ts", dir)
	if err := os.MkdirAll(filepath.Join(dir, "node_modules"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(ws, filepath.Join(dir, "node_modules", "ws")); err != nil {
		t.Fatal(err)
	}
	run := func(t *testing.T, env []string, name string, args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), env...)
		cmd.WaitDelay = 10 * time.Second
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s %s: %v\nstdout:\n%s\nstderr:\n%s", filepath.Base(name), strings.Join(args, " "), err, out, stderr.Bytes())
		}
		return string(out)
	}
	run(t, nil, tsc, "-p", "tsconfig.build.json", "--pretty", "false")

	t.Run("pack", func(t *testing.T) {
		npm, err := exec.LookPath("npm")
		if err != nil {
			testkit.Missing(t, "npm", err)
		}
		// --ignore-scripts: dist/ is built above with the pinned tsc (prepack would build it again).
		out := run(t, []string{"npm_config_cache=" + t.TempDir(), "npm_config_update_notifier=false", "npm_config_fund=false"},
			npm, "pack", "--dry-run", "--json", "--ignore-scripts")
		var packs []struct {
			Name    string `json:"name"`
			Version string `json:"version"`
			Files   []struct {
				Path string `json:"path"`
			} `json:"files"`
		}
		if err := json.Unmarshal([]byte(out), &packs); err != nil || len(packs) != 1 {
			t.Fatalf("npm pack --json: %v, %d packages:\n%s", err, len(packs), out)
		}
		var got []string
		for _, f := range packs[0].Files {
			got = append(got, f.Path)
		}
		slices.Sort(got)
		want := []string{"LICENSE", "README.md", "dist/client.d.ts", "dist/client.js", "dist/index.d.ts", "dist/index.js",
			"dist/protocol.d.ts", "dist/protocol.gen.d.ts", "dist/protocol.gen.js", "dist/protocol.js", "package.json"}
		t.Logf("npm pack --dry-run: %s@%s:\n  %s", packs[0].Name, packs[0].Version, strings.Join(got, "\n  "))
		if !slices.Equal(got, want) {
			t.Errorf("npm pack would publish\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
		}
		if pj := readPackageJSON(t); packs[0].Name != pj.Name || packs[0].Version != pj.Version {
			t.Errorf("npm pack packs %s@%s, package.json says %s@%s", packs[0].Name, packs[0].Version, pj.Name, pj.Version)
		}
	})

	t.Run("readme", func(t *testing.T) {
		// The TypeScript examples of the package's README and of the
		// repository README's VS Code section compile against the built
		// package, imported by its name.
		type snippet struct{ file, code string }
		var snippets []snippet
		for _, src := range []struct{ file, section string }{
			{filepath.Join("ts", "README.md"), ""},
			{filepath.Join("..", "README.md"), "## Embedding ccproxy in a VS Code extension"},
		} {
			b, err := os.ReadFile(src.file)
			if err != nil {
				t.Fatal(err)
			}
			text := string(b)
			if src.section != "" {
				i := strings.Index(text, src.section)
				if i < 0 {
					t.Fatalf("%s has no section %q", src.file, src.section)
				}
				text = text[i+len(src.section):]
				text, _, _ = strings.Cut(text, "\n## ")
			}
			blocks := regexp.MustCompile("(?s)```ts\n(.*?)\n *```").FindAllStringSubmatch(text, -1)
			if len(blocks) == 0 {
				t.Fatalf("%s%s has no ```ts example", src.file, src.section)
			}
			for _, m := range blocks {
				snippets = append(snippets, snippet{src.file, m[1]})
			}
		}
		sdir := t.TempDir() // outside dir: there "ws" would resolve to the untyped package
		if err := os.MkdirAll(filepath.Join(sdir, "node_modules", "@ccproxy"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(dir, filepath.Join(sdir, "node_modules", "@ccproxy", "client")); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(sdir, "package.json"), []byte(`{"type":"module","private":true}`))
		// What the examples leave to the application, and the types of ws (which has none).
		writeFile(t, filepath.Join(sdir, "app.d.ts"), []byte(`import type { NormalizedEvent, PermissionRequestData, Attachment } from "@ccproxy/client";
declare global {
  const url: string, token: string, attachment: Attachment;
  function render(...args: unknown[]): void;
  function showNotice(text: string): void;
  function showMissing(session: string, firstSeq: number): void;
  function askUser(question: string | PermissionRequestData, signal?: AbortSignal): Promise<boolean>;
}
export type Unused = NormalizedEvent;
`))
		writeFile(t, filepath.Join(sdir, "ws.d.ts"), []byte(`declare module "ws" {
  export const WebSocket: import("@ccproxy/client").WebSocketConstructor;
}
`))
		files := []string{"app.d.ts", "ws.d.ts"}
		for i, s := range snippets {
			name := fmt.Sprintf("example%d.ts", i)
			code := "// from " + s.file + "\n" + s.code + "\nexport {};\n"
			writeFile(t, filepath.Join(sdir, name), []byte(strings.ReplaceAll(code, "\n   ", "\n"))) // a block in a list item is indented
			files = append(files, name)
		}
		fileList, _ := json.Marshal(files)
		writeFile(t, filepath.Join(sdir, "tsconfig.json"), fmt.Appendf(nil, `{"compilerOptions": {"target": "ES2022", "module": "NodeNext",
  "moduleResolution": "NodeNext", "lib": ["ES2022", "DOM"], "strict": true, "noEmit": true, "skipLibCheck": false}, "files": %s}`, fileList))
		run(t, nil, tsc, "-p", filepath.Join(sdir, "tsconfig.json"), "--pretty", "false")
	})

	t.Run("node", func(t *testing.T) {
		out := run(t, []string{"CCPROXY_BIN=" + bin}, node, "--test", "--test-reporter=spec", filepath.Join("test", "client.test.mjs"))
		t.Logf("node --test:\n%s", out)
	})
}

// copyPackage copies the package's files from src to dst, leaving out what
// builds and installs make (dist/, node_modules/).
func copyPackage(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		if d.IsDir() {
			if rel == "dist" || rel == "node_modules" {
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		if !d.Type().IsRegular() {
			return errors.New(path + ": not a regular file")
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}
