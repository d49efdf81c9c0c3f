package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stowage/stowage/config"
	"github.com/stowage/stowage/internal/testutil/testcert"
)

// apiSecurity refuses an address other than loopback unless the API has
// both TLS and authentication or --insecure-http is given (then it warns);
// on loopback it turns the Host check on.
func TestAPISecurityBind(t *testing.T) {
	dir := t.TempDir()
	certs := testcert.New(t)
	crt, key := testcert.PEM(t, dir, "server", certs.Server)
	tlsOn := func(h *config.HTTP) { h.EnableHTTPS, h.CertFile, h.KeyFile = true, crt, key }
	authOn := func(h *config.HTTP) { h.EnableBasicAuth, h.BasicAuthPassword = true, "pw-secret-1" }
	for _, tc := range []struct {
		name      string
		addr      string
		https     string // --https
		edits     []func(*config.HTTP)
		insecure  bool
		wantErr   string // "" for none
		wantWarn  bool
		wantHost  bool // the Host check is on
		wantAddr  string
		wantTLS   bool
		wantCreds bool
	}{
		{name: "loopback, plain", addr: "127.0.0.1:5802", wantHost: true, wantAddr: "127.0.0.1:5802"},
		{name: "localhost, plain", addr: "localhost:5802", wantHost: true, wantAddr: "localhost:5802"},
		{name: "all interfaces, plain", addr: ":5802", wantErr: "has no TLS and authentication"},
		{name: "0.0.0.0, plain", addr: "0.0.0.0:5802", wantErr: "pass --insecure-http"},
		{name: "0.0.0.0, TLS only", addr: "0.0.0.0:5802", edits: []func(*config.HTTP){tlsOn}, wantErr: "has no authentication"},
		{name: "0.0.0.0, auth only", addr: "0.0.0.0:5802", edits: []func(*config.HTTP){authOn}, wantErr: "has no TLS"},
		{name: "0.0.0.0, TLS and auth", addr: "0.0.0.0:5802", edits: []func(*config.HTTP){tlsOn, authOn}, wantAddr: "0.0.0.0:8443", wantTLS: true, wantCreds: true},
		{name: "0.0.0.0, plain, --insecure-http", addr: "0.0.0.0:5802", insecure: true, wantWarn: true, wantAddr: "0.0.0.0:5802"},
		{name: "--https without enable-https", addr: "127.0.0.1:5802", https: "127.0.0.1:8443", wantErr: "enable-https is off"},
		{name: "--https", addr: "0.0.0.0:5802", https: "127.0.0.1:0", edits: []func(*config.HTTP){tlsOn}, wantHost: true, wantAddr: "127.0.0.1:0", wantTLS: true},
		{name: "loopback, TLS and auth", addr: "127.0.0.1:5802", edits: []func(*config.HTTP){tlsOn, authOn}, wantHost: true, wantAddr: "127.0.0.1:8443", wantTLS: true, wantCreds: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := config.Default()
			for _, e := range tc.edits {
				e(&cfg.Engine.HTTP)
			}
			var logs bytes.Buffer
			log := slog.New(slog.NewTextHandler(&logs, nil))
			s, err := apiSecurity(cfg, tc.addr, tc.https, tc.insecure, log)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.addr != tc.wantAddr || (s.tls != nil) != tc.wantTLS || s.sec.Authenticates() != tc.wantCreds || s.sec.LoopbackHost != tc.wantHost {
				t.Fatalf("serving %+v (tls %v), want addr %s, tls %v, auth %v, host check %v", s.sec, s.tls != nil, tc.wantAddr, tc.wantTLS, tc.wantCreds, tc.wantHost)
			}
			if got := strings.Contains(logs.String(), "level=WARN"); got != tc.wantWarn {
				t.Fatalf("warning logged: %v, want %v: %s", got, tc.wantWarn, logs.String())
			}
			if strings.Contains(logs.String(), "pw-secret") {
				t.Fatalf("the log shows the password: %s", logs.String())
			}
		})
	}
}

// stowage node bound to all interfaces without TLS and authentication
// stops at start, saying why and what to do, before it listens.
func TestNodeRefusesOpenAPI(t *testing.T) {
	dir := t.TempDir()
	cfgDir := filepath.Join(dir, "config")
	if err := writeConfigDir(cfgDir, filepath.Join(dir, "data"), "open"); err != nil {
		t.Fatal(err)
	}
	var o, e bytes.Buffer
	if code := run([]string{"node", "--config-dir", cfgDir, "--http", "0.0.0.0:0"}, &o, &e); code != 1 {
		t.Fatalf("exit %d, want 1; stderr %q", code, e.String())
	}
	for _, w := range []string{"0.0.0.0:0 is not a loopback address", "enable-https", "enable-basic-auth", "--insecure-http"} {
		if !strings.Contains(e.String(), w) {
			t.Fatalf("stderr %q does not contain %q", e.String(), w)
		}
	}
	if strings.Contains(o.String(), "listening") {
		t.Fatalf("the node listened: %q", o.String())
	}
}

// A real stowage node with seatunnel.engine.http's HTTPS (a PKCS#12 key
// store) and basic authentication serves only over TLS and only to the
// right user and password; /healthz stays open; plain HTTP to its port
// is not served; the password appears neither in its log nor in answers.
func TestNodeHTTPSWithBasicAuth(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	cfgDir := filepath.Join(dir, "config")
	if err := writeConfigDir(cfgDir, filepath.Join(dir, "data"), "https"); err != nil {
		t.Fatal(err)
	}
	certs := testcert.New(t)
	const storePass, password = "store-pw-7f3a", "basic-pw-91c2"
	ks := certs.KeyStore(t, dir, "keystore.p12", certs.Server, storePass)
	f, err := os.OpenFile(filepath.Join(cfgDir, config.SeatunnelFile), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.WriteString(f, "    http:\n      enable-https: true\n      key-store-path: "+ks+"\n      key-store-password: "+storePass+
		"\n      enable-basic-auth: true\n      basic-auth-username: operator\n      basic-auth-password: "+password+"\n")
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(dir, "node.log")
	node, err := startNode(ctx, cfgDir, logPath, "--https", "127.0.0.1:0", "-v")
	if err != nil {
		t.Fatal(err)
	}
	defer node.kill()
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: certs.Pool()}}}
	defer client.CloseIdleConnections()
	get := func(u, user, pass string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, u, nil)
		if user != "" {
			req.SetBasicAuth(user, pass)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", u, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	base := "https://" + node.addr
	deadline := time.Now().Add(time.Minute)
	for {
		code, _ := get(base+"/healthz", "", "")
		if code == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/healthz over TLS without credentials: %d within a minute", code)
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, c := range []struct{ user, pass string }{{"", ""}, {"operator", "wrong"}, {"admin", password}, {"operator", password + "x"}} {
		if code, body := get(base+"/v1/maps", c.user, c.pass); code != http.StatusUnauthorized || strings.Contains(body, password) {
			t.Errorf("GET /v1/maps as %q: %d %s, want 401", c.user, code, body)
		}
	}
	for _, p := range []string{"/v1/maps", "/v1/status", "/", "/metrics"} {
		if code, _ := get(base+p, "operator", password); code != http.StatusOK {
			t.Errorf("GET %s with the right credentials: %d, want 200", p, code)
		}
	}
	if resp, err := (&http.Client{Timeout: 10 * time.Second}).Get("http://" + node.addr + "/v1/maps"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Error("plain HTTP to the TLS port was served")
		}
	}
	if err := node.stop(); err != nil {
		t.Fatalf("node: %v", err)
	}
	logs, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(logs, []byte(password)) || bytes.Contains(logs, []byte(storePass)) {
		t.Fatalf("the node's log shows a password:\n%s", logs)
	}
	if !bytes.Contains(logs, []byte("auth=true")) {
		t.Fatalf("the node's log does not say it authenticates:\n%s", logs)
	}
}

// The Go-native alternatives on a real node: PEM certificate and key
// files and a bearer token from an environment variable.
func TestNodeHTTPSWithBearerToken(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	cfgDir := filepath.Join(dir, "config")
	if err := writeConfigDir(cfgDir, filepath.Join(dir, "data"), "bearer"); err != nil {
		t.Fatal(err)
	}
	certs := testcert.New(t)
	crt, key := testcert.PEM(t, dir, "server", certs.Server)
	const token = "tok-5f0c2b7e9a1d4c3b8e6f"
	t.Setenv("STOWAGE_TEST_NODE_TOKEN", token)
	f, err := os.OpenFile(filepath.Join(cfgDir, config.SeatunnelFile), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.WriteString(f, "    http:\n      enable-https: true\n      cert-file: "+crt+"\n      key-file: "+key+
		"\n      bearer-token-env: STOWAGE_TEST_NODE_TOKEN\n")
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(dir, "node.log")
	node, err := startNode(ctx, cfgDir, logPath, "--https", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer node.kill()
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: certs.Pool()}}}
	defer client.CloseIdleConnections()
	put := func(auth string) int {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPut, "https://"+node.addr+"/v1/maps/engine_jobs/entries/job-1", strings.NewReader("state-1"))
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	deadline := time.Now().Add(time.Minute)
	for code := put("Bearer " + token); code != http.StatusNoContent; code = put("Bearer " + token) {
		if time.Now().After(deadline) {
			t.Fatalf("PUT with the token: %d within a minute, want 204", code)
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, auth := range []string{"", "Bearer " + token + "x", "Bearer " + token[:20], "Basic b3BlcmF0b3I6dG9r"} {
		if code := put(auth); code != http.StatusUnauthorized {
			t.Errorf("PUT with %q: %d, want 401", auth, code)
		}
	}
	if err := node.stop(); err != nil {
		t.Fatalf("node: %v", err)
	}
	if logs, _ := os.ReadFile(logPath); bytes.Contains(logs, []byte(token)) {
		t.Fatalf("the node's log shows the token")
	}
}
