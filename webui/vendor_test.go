package webui_test

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"path"
	"strings"
	"testing"

	"github.com/ccproxy/ccproxy/webui"
)

// TestVendoredUI checks the web UI's third-party files (app/vendor, written
// by scripts/vendor-ui.sh) against app/vendor/VERSIONS: every file listed is
// embedded with the sha256 recorded there, every embedded file is listed,
// and every package has its license beside it. A hand edit of a vendored
// file, or a file dropped in by hand, fails here.
func TestVendoredUI(t *testing.T) {
	ui := webui.FS()
	versions, err := fs.ReadFile(ui, "vendor/VERSIONS")
	if err != nil {
		t.Fatalf("vendor/VERSIONS: %v (run scripts/vendor-ui.sh)", err)
	}
	packages := map[string]string{} // name -> version
	listed := map[string]bool{}
	licensed := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(string(versions)))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		switch {
		case f[0] == "package" && len(f) == 4:
			if !strings.HasPrefix(f[3], "sha512-") {
				t.Errorf("VERSIONS:%d: package %s has integrity %q, want sha512-…", n, f[1], f[3])
			}
			packages[f[1]] = f[2]
		case f[0] == "file" && len(f) == 5:
			sum, name, pkg := f[1], f[2], f[3]
			if _, ok := packages[pkg]; !ok {
				t.Errorf("VERSIONS:%d: %s comes from %s, which is not listed as a package", n, name, pkg)
			}
			b, err := fs.ReadFile(ui, path.Join("vendor", name))
			if err != nil {
				t.Errorf("VERSIONS:%d: %v", n, err)
				continue
			}
			if h := sha256.Sum256(b); hex.EncodeToString(h[:]) != sum {
				t.Errorf("vendor/%s has sha256 %x, VERSIONS says %s: vendored files are written by scripts/vendor-ui.sh, not edited", name, h, sum)
			}
			listed[name] = true
			if strings.HasPrefix(path.Base(name), "LICENSE") {
				licensed[pkg] = true
			}
		default:
			t.Errorf("VERSIONS:%d: %q is neither \"package NAME VERSION INTEGRITY\" nor \"file SHA256 PATH PACKAGE SOURCE\"", n, line)
		}
	}
	for pkg := range packages {
		if !licensed[pkg] {
			t.Errorf("package %s has no LICENSE file vendored", pkg)
		}
	}
	err = fs.WalkDir(ui, "vendor", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || p == "vendor/VERSIONS" {
			return err
		}
		if !listed[strings.TrimPrefix(p, "vendor/")] {
			t.Errorf("%s is not listed in vendor/VERSIONS", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(listed) == 0 {
		t.Fatal("vendor/VERSIONS lists no file")
	}
}
