// Package testcert makes the certificates TLS tests need: a certificate
// authority, a server certificate for 127.0.0.1, ::1 and localhost, and a
// client certificate, all signed by it, with their keys; and writes them
// as PEM files, PKCS#12 key stores and PKCS#12 trust stores.
package testcert

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"software.sslmate.com/src/go-pkcs12"
)

// Pair is a certificate with its private key.
type Pair struct {
	Cert *x509.Certificate
	Key  *ecdsa.PrivateKey
}

// TLS is p as a tls.Certificate.
func (p Pair) TLS() tls.Certificate {
	return tls.Certificate{Certificate: [][]byte{p.Cert.Raw}, PrivateKey: p.Key, Leaf: p.Cert}
}

// Set is an authority and the server and client certificates it signed.
type Set struct {
	CA, Server, Client Pair
}

// New makes a Set valid for an hour.
func New(t testing.TB) *Set {
	t.Helper()
	ca := makePair(t, &x509.Certificate{
		Subject:               pkix.Name{CommonName: "stowage test CA"},
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}, nil)
	server := makePair(t, &x509.Certificate{
		Subject:     pkix.Name{CommonName: "localhost"},
		DNSNames:    []string{"localhost"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}, &ca)
	client := makePair(t, &x509.Certificate{
		Subject:     pkix.Name{CommonName: "stowage test client"},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}, &ca)
	return &Set{CA: ca, Server: server, Client: client}
}

func makePair(t testing.TB, tmpl *x509.Certificate, parent *Pair) Pair {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	sn, err := rand.Int(rand.Reader, big.NewInt(1<<62))
	if err != nil {
		t.Fatal(err)
	}
	tmpl.SerialNumber = sn
	tmpl.NotBefore = time.Now().Add(-time.Minute)
	tmpl.NotAfter = time.Now().Add(time.Hour)
	signer, signerKey := tmpl, key
	if parent != nil {
		signer, signerKey = parent.Cert, parent.Key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, signer, &key.PublicKey, signerKey)
	if err != nil {
		t.Fatal(err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return Pair{Cert: c, Key: key}
}

// Pool is a pool holding the authority.
func (s *Set) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(s.CA.Cert)
	return p
}

// KeyStore writes p with the authority as its chain to dir/name as a
// PKCS#12 key store (AES-256 and PBKDF2, as keytool and openssl 3 write
// them) and returns the path.
func (s *Set) KeyStore(t testing.TB, dir, name string, p Pair, password string) string {
	t.Helper()
	data, err := pkcs12.Modern2023.Encode(p.Key, p.Cert, []*x509.Certificate{s.CA.Cert}, password)
	if err != nil {
		t.Fatal(err)
	}
	return write(t, dir, name, data)
}

// TrustStore writes the authority to dir/name as a PKCS#12 trust store
// (Java's trusted-certificate entries) and returns the path.
func (s *Set) TrustStore(t testing.TB, dir, name, password string) string {
	t.Helper()
	data, err := pkcs12.Modern2023.EncodeTrustStore([]*x509.Certificate{s.CA.Cert}, password)
	if err != nil {
		t.Fatal(err)
	}
	return write(t, dir, name, data)
}

// PEM writes p's certificate and key to dir/name.crt and dir/name.key and
// returns their paths.
func PEM(t testing.TB, dir, name string, p Pair) (certFile, keyFile string) {
	t.Helper()
	kder, err := x509.MarshalPKCS8PrivateKey(p.Key)
	if err != nil {
		t.Fatal(err)
	}
	certFile = write(t, dir, name+".crt", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: p.Cert.Raw}))
	keyFile = write(t, dir, name+".key", pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}))
	return certFile, keyFile
}

func write(t testing.TB, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
