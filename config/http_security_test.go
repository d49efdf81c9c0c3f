package config_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stowage/stowage/config"
)

func parseHTTP(t *testing.T, block string) (*config.Config, error) {
	t.Helper()
	return config.Parse([]byte("seatunnel:\n  engine:\n    http:\n"+block), nil)
}

// SeaTunnel's TLS and basic-auth keys and stowage's PEM and bearer keys
// are read; the passwords never appear in Dump, String or Ignored.
func TestHTTPSecurityKeys(t *testing.T) {
	c, err := parseHTTP(t, `      enable-https: true
      https-port: 9443
      key-store-path: /etc/stowage/keystore.p12
      key-store-password: ks-secret-1
      trust-store-path: /etc/stowage/truststore.p12
      trust-store-password: ts-secret-2
      enable-basic-auth: yes
      basic-auth-username: operator
      basic-auth-password: ba-secret-3
      bearer-token-env: STOWAGE_TEST_TOKEN
      enable-http: true
      port: 8080
`)
	if err != nil {
		t.Fatal(err)
	}
	h := c.Engine.HTTP
	want := config.HTTP{EnableHTTPS: true, HTTPSPort: 9443, KeyStorePath: "/etc/stowage/keystore.p12", KeyStorePassword: "ks-secret-1",
		TrustStorePath: "/etc/stowage/truststore.p12", TrustStorePassword: "ts-secret-2", EnableBasicAuth: true,
		BasicAuthUsername: "operator", BasicAuthPassword: "ba-secret-3", BearerTokenEnv: "STOWAGE_TEST_TOKEN"}
	if h != want {
		t.Fatalf("HTTP = %+v\nwant %+v", h, want)
	}
	if !h.TLS() || !h.Authenticated() {
		t.Fatalf("TLS %v, Authenticated %v", h.TLS(), h.Authenticated())
	}
	dump := c.String()
	for _, s := range []string{"ks-secret", "ts-secret", "ba-secret"} {
		if strings.Contains(dump, s) {
			t.Fatalf("Dump shows %s:\n%s", s, dump)
		}
	}
	for _, s := range []string{"key-store-password: '" + config.Redacted + "'", "basic-auth-username: operator", "https-port: 9443", "key-store-path: /etc/stowage/keystore.p12"} {
		if !strings.Contains(dump, s) {
			t.Fatalf("Dump lacks %q:\n%s", s, dump)
		}
	}
	ig := strings.Join(c.Ignored(), " ")
	if !strings.Contains(ig, "seatunnel.engine.http.port") || strings.Contains(ig, "enable-https") || strings.Contains(ig, "secret") {
		t.Fatalf("Ignored() = %s", ig)
	}
	// The default configuration dumps no http block.
	if d := config.Default().String(); strings.Contains(d, "http") {
		t.Fatalf("the default Dump has an http block:\n%s", d)
	}
}

// What TLS and authentication need is checked at load, naming the key.
func TestHTTPSecurityInvalid(t *testing.T) {
	for _, tc := range []struct{ block, want string }{
		{"      enable-https: true\n", "seatunnel.engine.http.enable-https: true needs key-store-path"},
		{"      enable-https: true\n      key-store-path: a.p12\n      cert-file: a.crt\n      key-file: a.key\n", "seatunnel.engine.http.key-store-path: give either"},
		{"      enable-https: true\n      cert-file: a.crt\n", "seatunnel.engine.http.cert-file: cert-file and key-file go together"},
		{"      enable-https: true\n      key-store-path: a.p12\n      key-store-password: one-secret\n      key-manager-password: two-secret\n", "seatunnel.engine.http.key-manager-password: stowage reads a PKCS#12 store with one password"},
		{"      enable-https: true\n      cert-file: a.crt\n      key-file: a.key\n      trust-store-path: t.p12\n      client-ca-file: ca.pem\n", "seatunnel.engine.http.trust-store-path: give either"},
		{"      enable-basic-auth: true\n", "seatunnel.engine.http.basic-auth-password: enable-basic-auth needs a password"},
		{"      enable-basic-auth: true\n      basic-auth-username: a:b\n      basic-auth-password: pw-secret\n", "seatunnel.engine.http.basic-auth-username: must be set and hold no ':'"},
		{"      bearer-token-file: /t\n      bearer-token-env: T\n", "seatunnel.engine.http.bearer-token-file: give either"},
		{"      https-port: 70000\n", "seatunnel.engine.http.https-port: 70000 is not a port"},
		{"      enable-https: maybe\n", "seatunnel.engine.http.enable-https"},
		{"      enable-htps: true\n", "did you mean enable-http"},
	} {
		_, err := parseHTTP(t, tc.block)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err = %v, want %q", tc.block, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("%q: the error shows a secret: %v", tc.block, err)
		}
	}
	// SeaTunnel's documents fill the TLS keys in with enable-https false:
	// accepted.
	if _, err := parseHTTP(t, "      enable-https: false\n      key-store-path: /k.jks\n      key-manager-password: other\n      trust-store-path: /t.jks\n"); err != nil {
		t.Fatal(err)
	}
}

// The bearer token comes from a file or an environment variable, white
// space trimmed; a short one, a missing file or an unset variable is an
// error naming the key and not the token.
func TestHTTPBearerToken(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "token")
	if err := os.WriteFile(file, []byte("  tok-0123456789abcdef\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	h := config.HTTP{BearerTokenFile: file}
	if tok, err := h.BearerToken(); err != nil || tok != "tok-0123456789abcdef" {
		t.Fatalf("token from file: %q %v", tok, err)
	}
	t.Setenv("STOWAGE_TEST_HTTP_TOKEN", "env-0123456789abcdef")
	h = config.HTTP{BearerTokenEnv: "STOWAGE_TEST_HTTP_TOKEN"}
	if tok, err := h.BearerToken(); err != nil || tok != "env-0123456789abcdef" {
		t.Fatalf("token from env: %q %v", tok, err)
	}
	t.Setenv("STOWAGE_TEST_HTTP_TOKEN", "short-secret")
	if _, err := h.BearerToken(); !errors.Is(err, config.ErrInvalid) || !strings.Contains(err.Error(), "bearer-token-env") || strings.Contains(err.Error(), "short-secret") {
		t.Fatalf("short token: %v", err)
	}
	h = config.HTTP{BearerTokenEnv: "STOWAGE_TEST_HTTP_TOKEN_UNSET"}
	if _, err := h.BearerToken(); err == nil || !strings.Contains(err.Error(), "STOWAGE_TEST_HTTP_TOKEN_UNSET is not set") {
		t.Fatalf("unset variable: %v", err)
	}
	h = config.HTTP{BearerTokenFile: filepath.Join(dir, "absent")}
	if _, err := h.BearerToken(); err == nil || !strings.Contains(err.Error(), "bearer-token-file") {
		t.Fatalf("missing file: %v", err)
	}
	if tok, err := (&config.HTTP{}).BearerToken(); tok != "" || err != nil {
		t.Fatalf("no token configured: %q %v", tok, err)
	}
}
