package httpapi

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"software.sslmate.com/src/go-pkcs12"

	"github.com/stowage/stowage/config"
)

// TLSConfig builds the server's TLS configuration from
// seatunnel.engine.http: nil when enable-https is off. The certificate
// comes from key-store-path (PKCS#12, opened with key-store-password:
// keytool's stores, Java 17's PBES2/AES ones too, and openssl's) or from
// cert-file and key-file (PEM). trust-store-path (PKCS#12 trusted
// certificates, as keytool -importcert writes them) or client-ca-file
// (PEM) turn on client certificate verification: every connection must
// present a certificate that chains to one of them. TLS 1.2 is the
// oldest version offered.
//
// Errors name the key and the file, never a password.
func TLSConfig(h *config.HTTP) (*tls.Config, error) {
	if !h.EnableHTTPS {
		return nil, nil
	}
	cert, err := serverCertificate(h)
	if err != nil {
		return nil, err
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}}
	pool, err := clientCAs(h)
	if err != nil {
		return nil, err
	}
	if pool != nil {
		tc.ClientCAs = pool
		tc.ClientAuth = tls.RequireAndVerifyClientCert
	}
	return tc, nil
}

func keyErr(key, file string, err error) error {
	return fmt.Errorf("seatunnel.engine.http.%s %s: %w", key, file, err)
}

// fileErr is a file error without the path, which keyErr already names.
func fileErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func serverCertificate(h *config.HTTP) (tls.Certificate, error) {
	if h.KeyStorePath == "" {
		if h.CertFile == "" || h.KeyFile == "" {
			return tls.Certificate{}, errors.New("seatunnel.engine.http.enable-https: needs key-store-path or cert-file and key-file")
		}
		c, err := tls.LoadX509KeyPair(h.CertFile, h.KeyFile)
		if err != nil {
			return tls.Certificate{}, keyErr("cert-file", h.CertFile+" / key-file "+h.KeyFile, err)
		}
		return c, nil
	}
	data, err := os.ReadFile(h.KeyStorePath)
	if err != nil {
		return tls.Certificate{}, keyErr("key-store-path", h.KeyStorePath, fileErr(err))
	}
	key, leaf, chain, err := pkcs12.DecodeChain(data, h.KeyStorePassword)
	if err != nil {
		return tls.Certificate{}, keyErr("key-store-path", h.KeyStorePath, fmt.Errorf("not a PKCS#12 key store holding one key and its certificate, or key-store-password is wrong: %w", err))
	}
	c := tls.Certificate{Certificate: [][]byte{leaf.Raw}, PrivateKey: key, Leaf: leaf}
	for _, ca := range chain {
		c.Certificate = append(c.Certificate, ca.Raw)
	}
	return c, nil
}

// clientCAs is the pool client certificates must chain to; nil when
// neither trust-store-path nor client-ca-file is set.
func clientCAs(h *config.HTTP) (*x509.CertPool, error) {
	switch {
	case h.TrustStorePath != "":
		data, err := os.ReadFile(h.TrustStorePath)
		if err != nil {
			return nil, keyErr("trust-store-path", h.TrustStorePath, fileErr(err))
		}
		certs, err := pkcs12.DecodeTrustStore(data, h.TrustStorePassword)
		if err != nil {
			return nil, keyErr("trust-store-path", h.TrustStorePath, fmt.Errorf("not a PKCS#12 trust store, or trust-store-password is wrong: %w", err))
		}
		if len(certs) == 0 {
			return nil, keyErr("trust-store-path", h.TrustStorePath, errors.New("holds no trusted certificate"))
		}
		pool := x509.NewCertPool()
		for _, c := range certs {
			pool.AddCert(c)
		}
		return pool, nil
	case h.ClientCAFile != "":
		data, err := os.ReadFile(h.ClientCAFile)
		if err != nil {
			return nil, keyErr("client-ca-file", h.ClientCAFile, fileErr(err))
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(data) {
			return nil, keyErr("client-ca-file", h.ClientCAFile, errors.New("holds no PEM certificate"))
		}
		return pool, nil
	}
	return nil, nil
}
