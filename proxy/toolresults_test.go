package proxy

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestToolResultsRoute: /v1/tool-results/<session>/<name> serves the files
// the CLI saved in a session's tool-results folder, to the token only, and
// nothing else: no other folder, no link out, no bad names.
func TestToolResultsRoute(t *testing.T) {
	home := t.TempDir()
	const id = "a53a96ea-6d00-48d2-90ad-6cb56a9ff999"
	dir := filepath.Join(home, ".claude", "projects", "-tmp-proj", id, "tool-results")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	write := func(p, data string) {
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(dir, "mcp-everything-audio-1.wav"), "RIFF....WAVE")
	write(filepath.Join(dir, "big.txt"), "1\n2\n3\n")
	secret := filepath.Join(t.TempDir(), "secret.txt")
	write(secret, "not yours")
	write(filepath.Join(home, ".claude", "projects", "-tmp-proj", id+".jsonl"), "{}")
	if err := os.Symlink(secret, filepath.Join(dir, "link.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub.txt"), 0o700); err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, Options{HistoryOptions: HistoryOptions{HistoryHome: home}})
	auth := http.Header{"Authorization": {"Bearer " + testToken}}
	base := ts.url + "/v1/tool-results/" + id + "/"

	resp, body := httpGet(t, "GET", base+"mcp-everything-audio-1.wav", auth)
	if resp.StatusCode != 200 || string(body) != "RIFF....WAVE" || !strings.HasPrefix(resp.Header.Get("Content-Type"), "audio/") ||
		resp.Header.Get("Content-Disposition") != "inline" || resp.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("audio: %s %q %v", resp.Status, body, resp.Header)
	}
	resp, body = httpGet(t, "HEAD", base+"big.txt", auth)
	if resp.StatusCode != 200 || len(body) != 0 || resp.Header.Get("Content-Length") != "6" || !strings.HasPrefix(resp.Header.Get("Content-Disposition"), "attachment") {
		t.Errorf("HEAD big.txt: %s %v", resp.Status, resp.Header)
	}
	if resp, _ := httpGet(t, "GET", base+"big.txt", nil); resp.StatusCode != 401 {
		t.Errorf("without the token: %s", resp.Status)
	}
	for _, c := range []struct {
		path string
		code int
	}{
		{base + "link.txt", 404},    // a link out of the projects folder
		{base + "sub.txt", 404},     // a folder
		{base + "nothing.txt", 404}, // no such file
		{base + "..%2Fx", 400},      // a path, escaped
		{base + ".hidden", 400},     // starts with a dot
		{base + "a..b", 400},        // ..
		{base + "a/b", 400},         // a folder
		{ts.url + "/v1/tool-results/" + strings.ToUpper(id) + "/big.txt", 400},
		{ts.url + "/v1/tool-results/not-a-session/big.txt", 400},
		{ts.url + "/v1/tool-results/" + id, 400},
		{ts.url + "/v1/tool-results/" + id + ".jsonl/big.txt", 400},
	} {
		if resp, body := httpGet(t, "GET", c.path, auth); resp.StatusCode != c.code || strings.Contains(string(body), "not yours") {
			t.Errorf("GET %s: %s %.100q, want %d", c.path, resp.Status, body, c.code)
		}
	}
	off := startServer(t, Options{HistoryOptions: HistoryOptions{HistoryHome: "-"}})
	if resp, _ := httpGet(t, "GET", off.url+"/v1/tool-results/"+id+"/big.txt", auth); resp.StatusCode != 404 {
		t.Errorf("history off: %s", resp.Status)
	}
}
