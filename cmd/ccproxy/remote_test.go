package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ccproxy/ccproxy/internal/testkit"
	"github.com/ccproxy/ccproxy/protocol"
	wsclient "github.com/ccproxy/ccproxy/protocol/client"
	"github.com/ccproxy/ccproxy/proxy"
	"github.com/ccproxy/ccproxy/proxy/remote"
)

// TestServeTLSUsage: off loopback only with TLS; the TLS flags go
// together as documented; status says what it lacks.
func TestServeTLSUsage(t *testing.T) {
	t.Setenv("CCPROXY_TOKEN", "")
	t.Setenv("CCPROXY_URL", "")
	t.Setenv("CCPROXY_TLS_FINGERPRINT", "")
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk.pem")
	os.WriteFile(junk, []byte("not PEM"), 0o600)
	tokenFile := filepath.Join(dir, "token")
	os.WriteFile(tokenFile, []byte(serveToken+"\n"), 0o600)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--addr", "0.0.0.0:0"}, "unless it serves TLS: give --tls-cert and --tls-key, or --tls-self-signed"},
		{[]string{"serve", "--addr", "[2001:db8::1]:0"}, "unless it serves TLS"},
		{[]string{"serve", "--tls-cert", junk}, "give --tls-cert and --tls-key together"},
		{[]string{"serve", "--tls-key", junk}, "give --tls-cert and --tls-key together"},
		{[]string{"serve", "--tls-self-signed", "--tls-cert", junk, "--tls-key", junk}, "not both"},
		{[]string{"serve", "--tls-self-signed", "--addr", "0.0.0.0:http-nope"}, "bad port"},
		{[]string{"serve", "--demo", "--addr", "0.0.0.0:0", "--tls-cert", junk, "--tls-key", junk}, "--tls-cert " + junk + " / --tls-key " + junk + ": tls: failed to find any PEM data"},
		{[]string{"serve", "--demo", "--tls-self-signed", "--host", "bad host"}, "--host: host name \"bad host\""},
		{[]string{"serve", "--demo", "--tls-self-signed", "--addr", "myhost:0"}, "want an IP address or localhost"},
		{[]string{"status"}, "give the daemon's URL with --url or $CCPROXY_URL"},
		{[]string{"status", "--url", "ftp://x"}, "want http://HOST:PORT"},
		{[]string{"status", "--url", "http://127.0.0.1:1"}, "no token: give --token-file PATH or set $CCPROXY_TOKEN"},
		{[]string{"status", "--url", "http://127.0.0.1:1", "--token-file", tokenFile, "--tls-fingerprint", "AB:CD"}, "64 hex digits"},
		{[]string{"status", "extra"}, "unexpected argument"},
		{[]string{"status", "--url", "http://127.0.0.1:1", "--token", "short"}, "status: --token: at least 16 characters are needed, got 5\n"}, // once "--token: token: at least"
	} {
		out, errOut, code := runCmd(t, "", tc.args...)
		if code != 2 || !strings.Contains(errOut, tc.want) || out != "" {
			t.Errorf("%q: exit %d, stderr %q, stdout %q; want exit 2 and %q", tc.args, code, errOut, out, tc.want)
		}
	}
	// A daemon that is not there: exit 1.
	if _, errOut, code := runCmd(t, "", "status", "--url", "http://127.0.0.1:1", "--token-file", tokenFile); code != 1 || !strings.Contains(errOut, "connection refused") {
		t.Errorf("status of nothing: exit %d, %q", code, errOut)
	}
}

// TestServeTLSSelfSigned runs the real binary with --tls-self-signed and
// --qr: its first line gives the https URL and the fingerprint of the
// certificate it really presents (also on stderr); the QR code of a second
// login link is on stderr; `ccproxy status` trusts the server by that
// fingerprint only, and summarizes it.
func TestServeTLSSelfSigned(t *testing.T) {
	bin := testkit.CCProxyBinary(t)
	srv := testkit.StartServe(t, bin, "--demo", "--demo-speed", "0", "--tls-self-signed", "--qr")
	base := fmt.Sprintf("https://127.0.0.1:%d", srv.First.Port)
	if srv.First.URL != base || !strings.HasPrefix(srv.First.LoginURL, base+"/#code=") || srv.First.Token == "" {
		t.Fatalf("first line %+v: want url %s and an https login link", srv.First, base)
	}

	// The certificate presented is the one announced.
	conn, err := tls.Dial("tcp", srv.First.URL[len("https://"):], &tls.Config{InsecureSkipVerify: true})
	if err != nil {
		t.Fatal(err)
	}
	peer := conn.ConnectionState().PeerCertificates[0]
	conn.Close()
	if got := remote.CertFingerprint(peer.Raw); got != srv.First.TLSFingerprint {
		t.Errorf("the server presents %s, the first line says %s", got, srv.First.TLSFingerprint)
	}
	if got := remote.SPKIHash(peer); got != srv.First.TLSSPKI {
		t.Errorf("SPKI %s, the first line says %s", got, srv.First.TLSSPKI)
	}
	if err := peer.VerifyHostname("127.0.0.1"); err != nil {
		t.Errorf("the self-signed certificate does not cover 127.0.0.1: %v", err)
	}

	// A session over wss, trusted by the fingerprint.
	pin, _ := remote.ParseFingerprint(srv.First.TLSFingerprint)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second) // fail, never hang
	defer cancel()
	c, err := wsclient.DialTLS(ctx, srv.First.URL, srv.First.Token, pinnedTLS(pin))
	if err != nil {
		t.Fatalf("wss: %v", err)
	}
	defer c.Close()
	var created protocol.SessionCreateResult
	if err := c.Request(ctx, protocol.TypeSessionCreate, &protocol.SessionCreate{}, &created); err != nil {
		t.Fatal(err)
	}
	session := created.Session
	idle := make(chan struct{})
	var once sync.Once
	c.Handle(session, func(f protocol.Frame) {
		var st protocol.SessionState
		if f.Type == protocol.TypeSessionState && json.Unmarshal(f.Data, &st) == nil && st.State == protocol.StateIdle {
			once.Do(func() { close(idle) })
		}
	})
	// The subscribe reply has the state now; a session/state push follows
	// only when it changes (a loaded machine may have it idle already).
	var sub protocol.SessionSubscribeResult
	if err := c.Request(ctx, protocol.TypeSessionSubscribe, &protocol.SessionSubscribe{Session: session}, &sub); err != nil {
		t.Fatal(err)
	}
	if sub.State != protocol.StateIdle {
		select {
		case <-idle:
		case <-ctx.Done():
			t.Fatal("waiting for idle: the session did not become idle")
		}
	}

	t.Setenv("CCPROXY_TOKEN", srv.First.Token)
	t.Setenv("CCPROXY_TLS_FINGERPRINT", "")
	out, errOut, code := runCmd(t, "", "status", "--url", srv.First.URL, "--tls-fingerprint", strings.ToLower(srv.First.TLSFingerprint))
	if code != 0 {
		t.Fatalf("status: exit %d: %s", code, errOut)
	}
	for _, want := range []string{" at " + base + " (TLS)", "\n  up ", "claude code: none: replaying the built-in demo (recorded with Claude Code 2.1.329)", "sessions:    1 (idle 1)", "clients:     1\n", "MCP servers: "} {
		if !strings.Contains(out, want) {
			t.Errorf("status output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out+errOut, srv.First.Token) {
		t.Errorf("status shows the token")
	}
	if _, errOut, code := runCmd(t, "", "status", "--url", srv.First.URL); code != 1 || !strings.Contains(errOut, "certificate") {
		t.Errorf("status without the pin: exit %d, %q; want 1 and a certificate error", code, errOut)
	}
	wrong := strings.Repeat("AB:", 31) + "AB"
	if _, errOut, code := runCmd(t, "", "status", "--url", srv.First.URL, "--tls-fingerprint", wrong); code != 1 || !strings.Contains(errOut, "not the one given") {
		t.Errorf("status with a wrong pin: exit %d, %q", code, errOut)
	}
	t.Setenv("CCPROXY_TLS_FINGERPRINT", srv.First.TLSFingerprint)
	out, errOut, code = runCmd(t, "", "status", "--url", srv.First.URL, "--json")
	var h proxy.Health
	if code != 0 || json.Unmarshal([]byte(out), &h) != nil || h.Sessions != 1 || !h.TLS {
		t.Errorf("status --json: exit %d %q %s", code, out, errOut)
	}

	// stderr: the fingerprint, and a QR code of a login link of its own
	// (printed before the log line that says it is serving).
	if !srv.Stderr.WaitFor("TLS certificate SHA-256 fingerprint: "+srv.First.TLSFingerprint, testkit.UIWait) {
		t.Errorf("stderr lacks the fingerprint:\n%s", srv.Stderr.String())
	}
	if !srv.Stderr.WaitFor("ccproxy serving", testkit.UIWait) {
		t.Fatalf("serve did not log that it serves:\n%s", srv.Stderr.String())
	}
	stderr := srv.Stderr.String()
	if !strings.Contains(stderr, "Scan this one-time login link with a phone") || !strings.Contains(stderr, "▀") {
		t.Errorf("stderr lacks the QR code:\n%s", stderr)
	}
	i := strings.Index(stderr, base+"/#code=")
	if i < 0 || strings.HasPrefix(stderr[i:], srv.First.LoginURL) {
		t.Errorf("the QR code's link must be a login link of its own, not the first line's:\n%s", stderr)
	}
}

// TestStatusLoopback: the loopback default still serves plain HTTP; status
// reads the URL and token from the environment.
func TestStatusLoopback(t *testing.T) {
	srv := testkit.StartServe(t, testkit.CCProxyBinary(t), "--demo")
	if !strings.HasPrefix(srv.First.URL, "http://127.0.0.1:") || srv.First.TLSFingerprint != "" {
		t.Fatalf("first line %+v: want plain http on loopback", srv.First)
	}
	if !srv.Stderr.WaitFor("ccproxy serving", testkit.UIWait) || strings.Contains(srv.Stderr.String(), "Scan this") {
		t.Errorf("a QR code without --qr, on loopback, stderr not a terminal:\n%s", srv.Stderr.String())
	}
	t.Setenv("CCPROXY_URL", srv.First.URL)
	t.Setenv("CCPROXY_TOKEN", srv.First.Token)
	out, errOut, code := runCmd(t, "", "status")
	if code != 0 || !(strings.HasPrefix(out, "ccproxy ") && strings.Contains(out, " at "+srv.First.URL+"\n")) || !strings.Contains(out, "sessions:    0\n") {
		t.Errorf("status: exit %d\n%s%s", code, out, errOut)
	}
	t.Setenv("CCPROXY_TOKEN", "wrong-token-0123456789abcdef")
	if _, errOut, code := runCmd(t, "", "status"); code != 1 || !strings.Contains(errOut, "401 Unauthorized: missing or wrong token") {
		t.Errorf("status with a wrong token: exit %d, %q", code, errOut)
	}
}

// TestRenderQR: the half-block drawing is the library's modules, with the
// quiet zone, two rows a line, light modules drawn.
func TestRenderQR(t *testing.T) {
	bits, err := qrBitmap("https://192.0.2.1:8443/#code=abcdefghijklmnopqrstuvwxyz012345")
	if err != nil {
		t.Fatal(err)
	}
	n := len(bits)
	if n < 21 || (n-17)%4 != 0 {
		t.Fatalf("a %d-module code is no QR version", n)
	}
	lines := strings.Split(strings.TrimSuffix(renderQR(bits), "\n"), "\n")
	size := n + 2*qrQuiet
	if len(lines) != (size+1)/2 {
		t.Fatalf("%d lines for %d module rows", len(lines), size)
	}
	// Decode the drawing back into modules and compare.
	for y := range size {
		row := []rune(lines[y/2])
		if len(row) != size {
			t.Fatalf("line %d has %d columns, want %d", y/2, len(row), size)
		}
		for x := range size {
			r := row[x]
			var light bool
			if y%2 == 0 {
				light = r == '█' || r == '▀'
			} else {
				light = r == '█' || r == '▄'
			}
			mx, my := x-qrQuiet, y-qrQuiet
			dark := mx >= 0 && my >= 0 && mx < n && my < n && bits[my][mx]
			if light == dark {
				t.Fatalf("module (%d,%d): drawn light=%v, dark=%v", x, y, light, dark)
			}
		}
	}
	// The finder pattern in the top-left corner: 7 dark modules across.
	for x := range 7 {
		if !bits[0][x] || !bits[6][x] {
			t.Fatalf("no finder pattern: the bitmap is not a QR code")
		}
	}
}

// TestServeTLSCertFiles: serve with --tls-cert/--tls-key presents that
// certificate, announces its fingerprint, and warns when it does not cover
// the host in the login links.
func TestServeTLSCertFiles(t *testing.T) {
	cert, err := remote.SelfSignedCert([]string{"ccproxy.test"})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	keyDER, err := x509.MarshalPKCS8PrivateKey(cert.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Certificate[0]}), 0o600)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600)

	srv := testkit.StartServe(t, testkit.CCProxyBinary(t), "--demo", "--tls-cert", certFile, "--tls-key", keyFile)
	if want := remote.CertFingerprint(cert.Certificate[0]); srv.First.TLSFingerprint != want {
		t.Errorf("fingerprint %q, want the file's %s", srv.First.TLSFingerprint, want)
	}
	if !srv.Stderr.WaitFor("warning: the --tls-cert certificate does not cover 127.0.0.1", testkit.UIWait) {
		t.Errorf("no warning that the certificate does not cover 127.0.0.1:\n%s", srv.Stderr.String())
	}
	// Reached by the name the certificate covers (--host would put it in
	// the links), verified the usual way.
	pool := x509.NewCertPool()
	pool.AddCert(cert.Leaf)
	conn, err := tls.Dial("tcp", srv.First.URL[len("https://"):], &tls.Config{RootCAs: pool, ServerName: "ccproxy.test"})
	if err != nil {
		t.Fatalf("TLS with the file's certificate: %v", err)
	}
	conn.Close()
}

// TestFormatHealthVersions: a daemon with no version stamped (go run)
// says what "(devel)" means, and a status from another build says its own
// version, so the two can be told apart.
func TestFormatHealthVersions(t *testing.T) {
	h := proxy.Health{Version: "(devel)", URL: "http://127.0.0.1:1"}
	out := formatHealth(h, "v0.0.0-20261128135919-34eaf2def1a7")
	for _, want := range []string{
		"ccproxy (devel: built with no version stamped, as `go run` builds) at http://127.0.0.1:1\n",
		"  this ccproxy: v0.0.0-20261128135919-34eaf2def1a7 (a different build from the daemon's)\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("lacks %q:\n%s", want, out)
		}
	}
	h.Version = "v1.2.3"
	if out := formatHealth(h, "v1.2.3"); !strings.HasPrefix(out, "ccproxy v1.2.3 at ") || strings.Contains(out, "this ccproxy") {
		t.Errorf("same build:\n%s", out)
	}
}
