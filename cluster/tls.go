package cluster

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
)

// Security authenticates and encrypts the member transport: every
// connection is TLS 1.3 with a certificate on both ends. It has two
// modes.
//
// PKI mode (CertFile, KeyFile, CAFile): each member presents the PEM
// certificate and key, and accepts a peer whose certificate chains to
// the CA file's certificates and, when AllowedSANs is not empty, names
// one of them (DNS name, IP address, URI or e-mail address). A caller is
// taken to be the member at the transport address it states only if the
// host of that address is among its certificate's IP addresses or DNS
// names: the certificate authenticates the host.
//
// Shared-secret mode (Secret, without a certificate): a certificate
// authority key is derived from the secret (HKDF-SHA256), so every member
// holding the secret has the same authority; each member issues itself a
// short-lived certificate naming its transport address, and accepts only
// peers whose certificate that authority signed. The caller is the
// member at the address its certificate names. The same secret also
// gives memberlist's gossip key (GossipKey).
//
// In PKI mode a Secret may be given as well: it then only keys the
// gossip.
type Security struct {
	CertFile, KeyFile, CAFile string
	AllowedSANs               []string
	Secret                    []byte
}

// Enabled reports whether s turns security on.
func (s *Security) Enabled() bool {
	return s != nil && (s.CertFile != "" || s.KeyFile != "" || s.CAFile != "" || len(s.Secret) > 0)
}

func (s *Security) pki() bool { return s.CertFile != "" || s.KeyFile != "" || s.CAFile != "" }

// minSecret is the least length of a shared secret.
const minSecret = 16

// Validate checks s without reading the files.
func (s *Security) Validate() error {
	if !s.Enabled() {
		return nil
	}
	if s.pki() && (s.CertFile == "" || s.KeyFile == "" || s.CAFile == "") {
		return errors.New("stowage/cluster: member TLS needs a certificate, a key and a CA file together")
	}
	if len(s.Secret) > 0 && len(s.Secret) < minSecret {
		return fmt.Errorf("stowage/cluster: the cluster secret is %d bytes long; at least %d", len(s.Secret), minSecret)
	}
	return nil
}

// GossipKey is memberlist's 32-byte gossip key derived from the secret,
// or nil without a secret.
func (s *Security) GossipKey() []byte {
	if s == nil || len(s.Secret) == 0 {
		return nil
	}
	return derive(s.Secret, "stowage memberlist gossip key v1", 32)
}

func derive(secret []byte, info string, n int) []byte {
	k, err := hkdf.Key(sha256.New, secret, []byte("stowage cluster secret"), info, n)
	if err != nil { // only for n out of range
		panic(err)
	}
	return k
}

// memberURIScheme names a transport address in a shared-secret
// certificate: stowage-member://host:port.
const memberURIScheme = "stowage-member"

// leafLife is how long a shared-secret member certificate is valid; it
// is issued again when less than a quarter of that is left.
const leafLife = 24 * time.Hour

// tlsState is a transport's side of Security: the configurations for
// both ends and how to tell who a peer is.
type tlsState struct {
	sec   *Security
	roots *x509.CertPool
	// PKI mode: the member's own certificate.
	cert *tls.Certificate
	// Shared-secret mode: the authority and the member's current
	// certificate, issued for addr.
	caKey  ed25519.PrivateKey
	caCert *x509.Certificate
	addr   string
	mu     sync.Mutex
	leaf   *tls.Certificate
}

// newTLSState reads the files (PKI mode) or derives the authority
// (shared-secret mode). Errors name the file, never a secret.
func newTLSState(s *Security) (*tlsState, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	st := &tlsState{sec: s, roots: x509.NewCertPool()}
	if s.pki() {
		cert, err := tls.LoadX509KeyPair(s.CertFile, s.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("stowage/cluster: member TLS certificate %s / key %s: %w", s.CertFile, s.KeyFile, scrubPEMErr(err))
		}
		st.cert = &cert
		pemCA, err := os.ReadFile(s.CAFile)
		if err != nil {
			return nil, fmt.Errorf("stowage/cluster: member TLS CA file: %w", err)
		}
		if !st.roots.AppendCertsFromPEM(pemCA) {
			return nil, fmt.Errorf("stowage/cluster: member TLS CA file %s holds no PEM certificate", s.CAFile)
		}
		return st, nil
	}
	st.caKey = ed25519.NewKeyFromSeed(derive(s.Secret, "stowage member transport CA key v1", ed25519.SeedSize))
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "stowage cluster authority"},
		NotBefore:             time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC),
		NotAfter:              time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, st.caKey.Public(), st.caKey)
	if err != nil {
		return nil, fmt.Errorf("stowage/cluster: cluster authority: %w", err)
	}
	st.caCert, err = x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("stowage/cluster: cluster authority: %w", err)
	}
	st.roots.AddCert(st.caCert)
	return st, nil
}

// scrubPEMErr keeps an error about a key file from quoting its bytes.
func scrubPEMErr(err error) error {
	if strings.Contains(err.Error(), "PRIVATE KEY") {
		return errors.New("the key does not parse or does not match the certificate")
	}
	return err
}

// certificate is the certificate this member presents.
func (st *tlsState) certificate() (*tls.Certificate, error) {
	if st.cert != nil {
		return st.cert, nil
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.leaf != nil && time.Until(st.leaf.Leaf.NotAfter) > leafLife/4 {
		return st.leaf, nil
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 126))
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: "stowage member " + st.addr},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(leafLife),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		URIs:         []*url.URL{{Scheme: memberURIScheme, Host: st.addr}},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, st.caCert, key.Public(), st.caKey)
	if err != nil {
		return nil, fmt.Errorf("stowage/cluster: member certificate: %w", err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	st.leaf = &tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}
	return st.leaf, nil
}

// verify checks a peer's chain against the roots and the allowed names;
// it returns the peer's leaf certificate.
func (st *tlsState) verify(certs []*x509.Certificate) (*x509.Certificate, error) {
	if len(certs) == 0 {
		return nil, errors.New("the peer presented no certificate")
	}
	inter := x509.NewCertPool()
	for _, c := range certs[1:] {
		inter.AddCert(c)
	}
	leaf := certs[0]
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: st.roots, Intermediates: inter,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}}); err != nil {
		return nil, fmt.Errorf("the peer's certificate is not from the cluster's authority: %w", err)
	}
	if st.cert == nil {
		if memberAddrOf(leaf) == "" {
			return nil, errors.New("the peer's certificate names no member address")
		}
		return leaf, nil
	}
	if len(st.sec.AllowedSANs) > 0 && !slices.ContainsFunc(sansOf(leaf), func(n string) bool { return slices.Contains(st.sec.AllowedSANs, n) }) {
		return nil, fmt.Errorf("the peer's certificate (%s) names none of the allowed SANs", leaf.Subject.CommonName)
	}
	return leaf, nil
}

// serverConfig is the listening side's TLS configuration.
func (st *tlsState) serverConfig() *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS13,
		ClientAuth: tls.RequireAnyClientCert,
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
			return st.certificate()
		},
		VerifyConnection: func(cs tls.ConnectionState) error {
			_, err := st.verify(cs.PeerCertificates)
			return err
		},
	}
}

// clientConfig is the dialling side's TLS configuration for the member
// at addr: the answering member must prove it is that member.
func (st *tlsState) clientConfig(addr string) *tls.Config {
	return &tls.Config{
		MinVersion:         tls.VersionTLS13,
		InsecureSkipVerify: true, // verified by VerifyConnection below
		GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			return st.certificate()
		},
		VerifyConnection: func(cs tls.ConnectionState) error {
			leaf, err := st.verify(cs.PeerCertificates)
			if err != nil {
				return fmt.Errorf("%w: %w", ErrAuthFailed, err)
			}
			if !st.names(leaf, addr) {
				return fmt.Errorf("%w: the certificate of the member at %s does not name that address", ErrAuthFailed, addr)
			}
			return nil
		},
	}
}

// names reports whether leaf authenticates the member at transport
// address addr: the exact address in shared-secret mode, the host in
// PKI mode.
func (st *tlsState) names(leaf *x509.Certificate, addr string) bool {
	if st.cert == nil {
		return memberAddrOf(leaf) == addr
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if ip := net.ParseIP(host); ip != nil {
		return slices.ContainsFunc(leaf.IPAddresses, ip.Equal)
	}
	return leaf.VerifyHostname(host) == nil
}

// peerAddr is the transport address of the member at the other end of an
// authenticated connection: the one its certificate names (shared
// secret), or the one it states if its certificate names that host (PKI).
// "" when neither holds.
func (st *tlsState) peerAddr(leaf *x509.Certificate, stated string) string {
	if st.cert == nil {
		return memberAddrOf(leaf)
	}
	if stated != "" && st.names(leaf, stated) {
		return stated
	}
	return ""
}

func memberAddrOf(c *x509.Certificate) string {
	for _, u := range c.URIs {
		if u.Scheme == memberURIScheme && u.Host != "" {
			return u.Host
		}
	}
	return ""
}

func sansOf(c *x509.Certificate) []string {
	out := slices.Clone(c.DNSNames)
	for _, ip := range c.IPAddresses {
		out = append(out, ip.String())
	}
	for _, u := range c.URIs {
		out = append(out, u.String())
	}
	return append(out, c.EmailAddresses...)
}
