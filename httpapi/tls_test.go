package httpapi_test

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stowage/stowage/config"
	"github.com/stowage/stowage/httpapi"
	"github.com/stowage/stowage/internal/testutil/testcert"
)

// serveTLS serves h over TLS as stowage node does, on 127.0.0.1, and
// returns the address; the server is shut down when the test ends.
func serveTLS(t *testing.T, h http.Handler, tc *tls.Config) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := httpapi.NewServer(h, tc, httpapi.DefaultTimeouts(), nil)
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.ServeTLS(ln, "", "") }()
	t.Cleanup(func() { srv.Close(); <-done })
	return ln.Addr().String()
}

func tlsClient(roots *x509.CertPool, certs ...tls.Certificate) *http.Client {
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: roots, Certificates: certs},
	}}
}

func status(c *http.Client, u string) (int, error) {
	resp, err := c.Get(u)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, nil
}

// The API is served over TLS with a certificate from a PKCS#12 key store
// given by SeaTunnel's keys; a plain HTTP request to the TLS port is not
// served, and a wrong store password is an error naming the key but not
// the password.
func TestTLSFromPKCS12KeyStore(t *testing.T) {
	dir := t.TempDir()
	certs := testcert.New(t)
	h := &config.HTTP{
		EnableHTTPS:      true,
		KeyStorePath:     certs.KeyStore(t, dir, "server.p12", certs.Server, "ks-pass-1"),
		KeyStorePassword: "ks-pass-1",
	}
	tc, err := httpapi.TLSConfig(h)
	if err != nil {
		t.Fatal(err)
	}
	if len(tc.Certificates) != 1 || len(tc.Certificates[0].Certificate) != 2 {
		t.Fatalf("certificate chain from the store: %+v, want the server's and the CA's", tc.Certificates)
	}
	n := openNode(t, t.TempDir())
	addr := serveTLS(t, httpapi.Handler(n), tc)

	if code, err := status(tlsClient(certs.Pool()), "https://"+addr+"/v1/maps"); err != nil || code != http.StatusOK {
		t.Fatalf("GET over TLS: %d %v, want 200", code, err)
	}
	if code, err := status(tlsClient(certs.Pool()), "https://localhost:"+port(addr)+"/v1/maps"); err != nil || code != http.StatusOK {
		t.Fatalf("GET over TLS to localhost: %d %v, want 200", code, err)
	}
	// A client that does not trust the authority refuses the server.
	if _, err := status(tlsClient(x509.NewCertPool()), "https://"+addr+"/v1/maps"); err == nil {
		t.Fatal("a client without the CA accepted the server's certificate")
	}
	// Plain HTTP on the TLS port: no map list comes back.
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Get("http://" + addr + "/v1/maps")
	if err == nil {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK || strings.Contains(string(b), "[") {
			t.Fatalf("plain HTTP to the TLS port was served: %s %q", resp.Status, b)
		}
	}

	h.KeyStorePassword = "ks-pass-2"
	if _, err := httpapi.TLSConfig(h); err == nil || !strings.Contains(err.Error(), "key-store-path") || !strings.Contains(err.Error(), "key-store-password is wrong") || strings.Contains(err.Error(), "ks-pass") {
		t.Fatalf("wrong store password: err = %v; want one naming key-store-path and not the password", err)
	}
	h.KeyStorePath = filepath.Join(dir, "absent.p12")
	if _, err := httpapi.TLSConfig(h); err == nil || !strings.Contains(err.Error(), "seatunnel.engine.http.key-store-path "+h.KeyStorePath) {
		t.Fatalf("missing store: err = %v", err)
	}
}

func port(addr string) string {
	_, p, _ := net.SplitHostPort(addr)
	return p
}

// A trust store (PKCS#12, or PEM in client-ca-file) makes every client
// present a certificate its authority signed.
func TestTLSClientCertificates(t *testing.T) {
	dir := t.TempDir()
	certs := testcert.New(t)
	other := testcert.New(t)
	crt, key := testcert.PEM(t, dir, "server", certs.Server)
	ca, _ := testcert.PEM(t, dir, "ca", certs.CA)
	for name, h := range map[string]*config.HTTP{
		"trust store": {EnableHTTPS: true, CertFile: crt, KeyFile: key,
			TrustStorePath: certs.TrustStore(t, dir, "trust.p12", "ts-pass"), TrustStorePassword: "ts-pass"},
		"client-ca-file": {EnableHTTPS: true, CertFile: crt, KeyFile: key, ClientCAFile: ca},
	} {
		t.Run(name, func(t *testing.T) {
			tc, err := httpapi.TLSConfig(h)
			if err != nil {
				t.Fatal(err)
			}
			n := openNode(t, t.TempDir())
			addr := serveTLS(t, httpapi.Handler(n), tc)
			u := "https://" + addr + "/v1/maps"
			if code, err := status(tlsClient(certs.Pool(), certs.Client.TLS()), u); err != nil || code != http.StatusOK {
				t.Fatalf("client with a certificate of the CA: %d %v, want 200", code, err)
			}
			if code, err := status(tlsClient(certs.Pool()), u); err == nil {
				t.Fatalf("client without a certificate: %d, want the handshake refused", code)
			}
			if code, err := status(tlsClient(certs.Pool(), other.Client.TLS()), u); err == nil {
				t.Fatalf("client with a certificate of another CA: %d, want the handshake refused", code)
			}
		})
	}
}

// keytool, as Java 17 and later write PKCS#12 (PBES2 with AES-256 and
// HMAC-SHA256), makes the key store and trust store; stowage reads both.
func TestTLSKeytoolStores(t *testing.T) {
	keytool, err := exec.LookPath("keytool")
	if err != nil {
		t.Skip("keytool not on PATH")
	}
	dir := t.TempDir()
	ks, ts, crt := filepath.Join(dir, "keystore.p12"), filepath.Join(dir, "truststore.p12"), filepath.Join(dir, "server.crt")
	run := func(args ...string) {
		t.Helper()
		out, err := exec.Command(keytool, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("keytool %s: %v\n%s", args[0], err, out)
		}
	}
	run("-genkeypair", "-alias", "stowage", "-keyalg", "RSA", "-keysize", "2048", "-dname", "CN=localhost",
		"-ext", "SAN=ip:127.0.0.1,dns:localhost", "-validity", "2",
		"-storetype", "PKCS12", "-keystore", ks, "-storepass", "kt-store-pass", "-keypass", "kt-store-pass")
	run("-exportcert", "-alias", "stowage", "-keystore", ks, "-storepass", "kt-store-pass", "-rfc", "-file", crt)
	run("-importcert", "-noprompt", "-alias", "client", "-file", crt,
		"-storetype", "PKCS12", "-keystore", ts, "-storepass", "kt-trust-pass")

	h := &config.HTTP{EnableHTTPS: true, KeyStorePath: ks, KeyStorePassword: "kt-store-pass", KeyManagerPassword: "kt-store-pass",
		TrustStorePath: ts, TrustStorePassword: "kt-trust-pass"}
	tc, err := httpapi.TLSConfig(h)
	if err != nil {
		t.Fatal(err)
	}
	leaf := tc.Certificates[0].Leaf
	if leaf == nil || leaf.Subject.CommonName != "localhost" {
		t.Fatalf("certificate from the keytool store: %+v", leaf)
	}
	roots := x509.NewCertPool()
	roots.AddCert(leaf)
	n := openNode(t, t.TempDir())
	addr := serveTLS(t, httpapi.Handler(n), tc)
	// The trust store holds the same self-signed certificate: the client
	// presents it.
	if code, err := status(tlsClient(roots, tc.Certificates[0]), "https://"+addr+"/v1/maps"); err != nil || code != http.StatusOK {
		t.Fatalf("GET with the keytool certificate: %d %v, want 200", code, err)
	}
	if _, err := status(tlsClient(roots), "https://"+addr+"/v1/maps"); err == nil {
		t.Fatal("a client without a certificate was served")
	}
}

// A body trickled a byte at a time is cut off at its deadline (BodyBase
// plus its length at BodyRate), and nothing of it is written; headers
// trickled the same way are cut off at ReadHeader.
func TestTrickledBodyCutOff(t *testing.T) {
	n := openNode(t, t.TempDir())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	to := httpapi.DefaultTimeouts()
	to.ReadHeader, to.Read, to.BodyBase = time.Second, 2*time.Second, time.Second
	srv := httpapi.NewServer(httpapi.Handler(n), nil, to, nil)
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(ln) }()
	defer func() { srv.Close(); <-done }()
	addr := ln.Addr().String()

	// trickle sends head, then rest a byte every 250 ms, and returns the
	// first line the server answered (or "" when it only closed) and how
	// many bytes of rest were sent. It gives up after 20 s.
	trickle := func(head, rest string) (string, int) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		answered := make(chan string, 1)
		go func() {
			line, _ := bufio.NewReader(c).ReadString('\n')
			answered <- strings.TrimSpace(line)
		}()
		if _, err := io.WriteString(c, head); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < len(rest); i++ {
			select {
			case line := <-answered:
				return line, i
			case <-time.After(250 * time.Millisecond):
			}
			if _, err := c.Write([]byte{rest[i]}); err != nil {
				return <-answered, i
			}
		}
		select {
		case line := <-answered:
			return line, len(rest)
		case <-time.After(20 * time.Second):
			return "no answer", len(rest)
		}
	}

	body := strings.Repeat("x", 80) // 20 s at a byte per 250 ms
	line, sent := trickle("PUT /v1/maps/engine_t/entries/k HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 80\r\n\r\n", body)
	if sent == len(body) || !strings.Contains(line, "408") {
		t.Fatalf("trickled body: answer %q after %d of %d bytes; want 408 before the body was complete", line, sent, len(body))
	}
	if code, _ := do(t, http.MethodGet, "http://"+addr+"/v1/maps/engine_t/entries/k", ""); code != http.StatusNotFound {
		t.Fatalf("GET of the cut-off key: %d, want 404", code)
	}

	line, sent = trickle("GET /v1/maps HTTP/1.1\r\n", "Host: 127.0.0.1\r\nX-Padding: "+strings.Repeat("p", 60)+"\r\n\r\n")
	if sent == 80 || strings.Contains(line, "200") {
		t.Fatalf("trickled headers: answer %q after %d bytes; want the connection cut", line, sent)
	}

	// A whole request is served.
	if code, body := do(t, http.MethodPut, "http://"+addr+"/v1/maps/engine_t/entries/k", "v"); code != http.StatusNoContent {
		t.Fatalf("PUT at full speed: %d %s", code, body)
	}
}
