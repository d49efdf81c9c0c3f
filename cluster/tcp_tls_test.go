package cluster_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io"
	"log/slog"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stowage/stowage/cluster"
)

// Tests of the transport's TLS: who is let in, and who the handler is
// told the caller is.

var secretA = []byte("a shared secret of the cluster, 1")

// echoFrom installs a handler that answers with the from it was given.
func echoFrom(tr cluster.Transport) {
	tr.SetHandler(func(_ context.Context, from, _ string, _ []byte) ([]byte, error) {
		return []byte(from), nil
	})
}

func TestTLSSecretAcceptsTheSameSecret(t *testing.T) {
	srv := listenTCP(t, cluster.TCPOptions{Security: &cluster.Security{Secret: secretA}})
	cli := listenTCP(t, cluster.TCPOptions{Security: &cluster.Security{Secret: secretA}})
	if !srv.Secure() {
		t.Fatal("Secure() false with a secret")
	}
	echoFrom(srv)
	got, err := cli.Call(callCtx(t), srv.Addr(), "who", nil)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != cli.Addr() {
		t.Errorf("handler saw %q, want the caller's %q", got, cli.Addr())
	}
}

func TestTLSSecretRefusesAnotherSecret(t *testing.T) {
	srv := listenTCP(t, cluster.TCPOptions{Security: &cluster.Security{Secret: secretA}, DialTimeout: 2 * time.Second})
	echoFrom(srv)
	for name, opts := range map[string]cluster.TCPOptions{
		"wrong secret": {Security: &cluster.Security{Secret: []byte("another secret, another cluster")}},
		"no TLS":       {},
	} {
		cli := listenTCP(t, opts)
		if _, err := cli.Call(callCtx(t), srv.Addr(), "who", nil); err == nil {
			t.Errorf("%s: the call was served", name)
		}
	}
	// A member with TLS does not talk to one without.
	plain := listenTCP(t, cluster.TCPOptions{})
	echoFrom(plain)
	cli := listenTCP(t, cluster.TCPOptions{Security: &cluster.Security{Secret: secretA}})
	if _, err := cli.Call(callCtx(t), plain.Addr(), "who", nil); err == nil {
		t.Error("a TLS member called a member without TLS")
	}
}

// TestTLSSenderIsTheCertificate: a caller whose frames state one address
// and whose certificate names another is taken to be the certificate's.
func TestTLSSenderIsTheCertificate(t *testing.T) {
	srv := listenTCP(t, cluster.TCPOptions{Security: &cluster.Security{Secret: secretA}})
	cli := listenTCP(t, cluster.TCPOptions{Security: &cluster.Security{Secret: secretA}})
	echoFrom(srv)
	const proven = "127.0.0.1:9"
	cluster.SetCertAddr(cli, proven)
	got, err := cli.Call(callCtx(t), srv.Addr(), "who", nil)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != proven {
		t.Errorf("handler saw %q, want the certificate's %q (the frame stated %q)", got, proven, cli.Addr())
	}
}

func TestTLSSecretValidation(t *testing.T) {
	if tr, err := cluster.ListenTCP("127.0.0.1:0", cluster.TCPOptions{Security: &cluster.Security{Secret: []byte("short")}}); err == nil {
		tr.Close()
		t.Error("a 5-byte secret was accepted")
	}
	if tr, err := cluster.ListenTCP("127.0.0.1:0", cluster.TCPOptions{Security: &cluster.Security{CertFile: "x.pem"}}); err == nil {
		tr.Close()
		t.Error("a certificate without key and CA was accepted")
	}
}

// pki is a test certificate authority writing PEM files.
type pki struct {
	dir  string
	key  *ecdsa.PrivateKey
	cert *x509.Certificate
	ca   string // CA file
}

func newPKI(t *testing.T, name string) *pki {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	p := &pki{dir: t.TempDir(), key: key, cert: cert}
	p.ca = p.write(t, name+"-ca.pem", "CERTIFICATE", der)
	return p
}

func (p *pki) write(t *testing.T, name, typ string, der []byte) string {
	t.Helper()
	f := filepath.Join(p.dir, name)
	if err := os.WriteFile(f, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// member issues a member certificate for 127.0.0.1 with a DNS name.
func (p *pki) member(t *testing.T, dns string, sans ...string) *cluster.Security {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: dns},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		DNSNames:    []string{dns}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.cert, key.Public(), p.key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return &cluster.Security{CertFile: p.write(t, dns+".pem", "CERTIFICATE", der), KeyFile: p.write(t, dns+"-key.pem", "PRIVATE KEY", kder),
		CAFile: p.ca, AllowedSANs: sans}
}

func TestTLSPKI(t *testing.T) {
	ca := newPKI(t, "cluster")
	other := newPKI(t, "other")
	srv := listenTCP(t, cluster.TCPOptions{Security: ca.member(t, "m1.test", "m1.test", "m2.test")})
	echoFrom(srv)

	good := listenTCP(t, cluster.TCPOptions{Security: ca.member(t, "m2.test")})
	got, err := good.Call(callCtx(t), srv.Addr(), "who", nil)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != good.Addr() {
		t.Errorf("handler saw %q, want %q", got, good.Addr())
	}

	for name, sec := range map[string]*cluster.Security{
		"another CA":        other.member(t, "m2.test"),
		"a SAN not allowed": ca.member(t, "m3.test"),
	} {
		cli := listenTCP(t, cluster.TCPOptions{Security: sec})
		if _, err := cli.Call(callCtx(t), srv.Addr(), "who", nil); err == nil {
			t.Errorf("%s: the call was served", name)
		}
	}

	// A caller stating an address its certificate does not name is not
	// taken for the member there.
	liar := listenTCP(t, cluster.TCPOptions{Security: ca.member(t, "m2.test"), Advertise: "10.1.2.3:5801"})
	_, err = liar.Call(callCtx(t), srv.Addr(), "who", nil)
	if !cluster.IsRemote(err) || !errors.Is(err, cluster.ErrNotMember) {
		t.Errorf("a caller stating an address not in its certificate: %v, want ErrNotMember", err)
	}
}

// TestTLSHandshakeDeadline: a connection that never completes its
// handshake is closed after HandshakeTimeout.
func TestTLSHandshakeDeadline(t *testing.T) {
	srv := listenTCP(t, cluster.TCPOptions{Security: &cluster.Security{Secret: secretA}, HandshakeTimeout: 200 * time.Millisecond})
	conn, err := net.Dial("tcp", srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetReadDeadline(time.Now().Add(longStop))
	if _, err := io.ReadAll(conn); err != nil {
		t.Fatalf("the silent connection was not closed by the member: %v", err)
	}
}

// TestMaxStreamsPerConnection: one connection has at most MaxStreams
// handlers running; the other calls wait and are served later.
func TestMaxStreamsPerConnection(t *testing.T) {
	srv := listenTCP(t, cluster.TCPOptions{MaxStreams: 2})
	cli := listenTCP(t, cluster.TCPOptions{})
	var running, most atomic.Int32
	release := make(chan struct{})
	srv.SetHandler(func(ctx context.Context, _, _ string, _ []byte) ([]byte, error) {
		n := running.Add(1)
		defer running.Add(-1)
		for {
			m := most.Load()
			if n <= m || most.CompareAndSwap(m, n) {
				break
			}
		}
		select {
		case <-release:
		case <-ctx.Done():
		}
		return nil, nil
	})
	const calls = 6
	errs := make(chan error, calls)
	for range calls {
		go func() {
			_, err := cli.Call(callCtx(t), srv.Addr(), "slow", nil)
			errs <- err
		}()
	}
	deadline := time.Now().Add(longStop)
	for running.Load() < 2 {
		if time.Now().After(deadline) {
			t.Fatal("the first two calls did not start")
		}
		time.Sleep(5 * time.Millisecond) // polling interval
	}
	time.Sleep(200 * time.Millisecond) // room for more handlers to start, were they allowed
	close(release)
	for range calls {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if m := most.Load(); m != 2 {
		t.Errorf("at most %d handlers ran at once on one connection, want 2", m)
	}
}

// TestTLSRollingEnablementRefused: a member without TLS calling one with
// it is refused, and the member with TLS says why in its log, with the
// secret nowhere in it: TLS is turned on for every member at once
// (docs/security.md).
func TestTLSRollingEnablementRefused(t *testing.T) {
	rec := newRecorder()
	srv := listenTCP(t, cluster.TCPOptions{Security: &cluster.Security{Secret: secretA}, Logger: slog.New(rec)})
	echoFrom(srv)
	plain := listenTCP(t, cluster.TCPOptions{})
	if _, err := plain.Call(callCtx(t), srv.Addr(), "who", nil); err == nil {
		t.Fatal("a member without TLS was served")
	}
	line := rec.wait(t, "does not speak TLS", "every member needs hazelcast.network.ssl")
	if strings.Contains(line, string(secretA)) {
		t.Errorf("the log shows the secret: %s", line)
	}
}
