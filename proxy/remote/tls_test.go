package remote

import (
	"crypto/x509"
	"fmt"
	"net"
	"strings"
	"testing"
)

// TestServedHostsAndCert: the served hosts of a listen address, and a
// self-signed certificate that covers them.
func TestServedHostsAndCert(t *testing.T) {
	hosts, err := ServedHosts(&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1}, []string{"Phone.Lan.", "[fd00::1]"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"phone.lan", "fd00::1", "127.0.0.1", "localhost", "::1"}
	if strings.Join(hosts, ",") != strings.Join(want, ",") {
		t.Errorf("served hosts %v, want %v", hosts, want)
	}
	all, err := ServedHosts(&net.TCPAddr{IP: net.IPv4zero, Port: 1}, nil)
	if err != nil || len(all) == 0 || !contains(all, "127.0.0.1") || !contains(all, "localhost") {
		t.Errorf("0.0.0.0 serves %v (%v): want every interface address, loopback included", all, err)
	}
	for _, h := range all {
		if ip := net.ParseIP(h); ip != nil && ip.To4() == nil {
			t.Errorf("0.0.0.0 claims the IPv6 address %s", h)
		}
	}
	for _, bad := range []string{"", "a b", "-x.example", "x..example", "evil.example/path"} {
		if _, err := ServedHosts(&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)}, []string{bad}); err == nil {
			t.Errorf("host name %q accepted", bad)
		}
	}

	cert, err := SelfSignedCert(hosts)
	if err != nil {
		t.Fatal(err)
	}
	if cert.Leaf.PublicKeyAlgorithm != x509.ECDSA {
		t.Errorf("key algorithm %v, want ECDSA", cert.Leaf.PublicKeyAlgorithm)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert.Leaf)
	for _, h := range hosts {
		if _, err := cert.Leaf.Verify(x509.VerifyOptions{DNSName: h, Roots: pool}); err != nil {
			t.Errorf("the certificate does not cover %s: %v", h, err)
		}
	}
	if _, err := cert.Leaf.Verify(x509.VerifyOptions{DNSName: "other.lan", Roots: pool}); err == nil {
		t.Errorf("the certificate covers a host it was not made for")
	}
	fp := CertFingerprint(cert.Certificate[0])
	if len(fp) != 95 || strings.ToUpper(fp) != fp {
		t.Errorf("fingerprint %q: want 32 upper-case hex bytes joined by colons", fp)
	}
	parsed, err := ParseFingerprint(strings.ToLower(strings.ReplaceAll(fp, ":", "")))
	if err != nil || CertFingerprint(cert.Certificate[0]) != fingerprintString(parsed) {
		t.Errorf("ParseFingerprint(%s): %v", fp, err)
	}
	if _, err := ParseFingerprint("AB:CD"); err == nil || !strings.Contains(err.Error(), "64 hex digits") {
		t.Errorf("short fingerprint: %v", err)
	}
}

func fingerprintString(b [32]byte) string {
	var parts []string
	for _, c := range b {
		parts = append(parts, fmt.Sprintf("%02X", c))
	}
	return strings.Join(parts, ":")
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
