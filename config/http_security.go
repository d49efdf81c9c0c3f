package config

import (
	"os"
	"strings"

	"go.yaml.in/yaml/v3"
)

// HTTP is seatunnel.engine.http as far as it concerns the security of
// stowage's HTTP API (stowage node --http): TLS and authentication.
// SeaTunnel's keys keep their meaning; the PEM and bearer-token keys are
// stowage's own (SeaTunnel only warns about them, so one seatunnel.yaml
// serves both).
//
// The values are checked by Validate without touching the files; the key
// store, certificates and token file are read when the server is built
// (httpapi.ServerSecurity), whose errors name the key and the file.
type HTTP struct {
	// EnableHTTPS is enable-https: serve the API over TLS only. Default
	// false.
	EnableHTTPS bool
	// HTTPSPort is https-port: the port of the TLS listener, on the host
	// of --http (stowage node --https overrides the address). Default
	// 8443, as SeaTunnel.
	HTTPSPort int
	// KeyStorePath and KeyStorePassword are key-store-path and
	// key-store-password: a PKCS#12 key store holding the server's key and
	// certificate chain (keytool -storetype PKCS12, also Java 17's
	// PBES2/AES stores, or openssl pkcs12 -export).
	KeyStorePath, KeyStorePassword string
	// KeyManagerPassword is key-manager-password. stowage decodes a store
	// with one password; when given it must equal key-store-password.
	KeyManagerPassword string
	// TrustStorePath and TrustStorePassword are trust-store-path and
	// trust-store-password: a PKCS#12 store of trusted certificates. When
	// given, every client must present a certificate that chains to one
	// of them (mutual TLS).
	TrustStorePath, TrustStorePassword string
	// CertFile and KeyFile are cert-file and key-file (stowage's): a PEM
	// certificate chain and its PEM private key, the Go-native
	// alternative to key-store-path.
	CertFile, KeyFile string
	// ClientCAFile is client-ca-file (stowage's): PEM certificates of the
	// authorities client certificates must chain to, the alternative to
	// trust-store-path.
	ClientCAFile string
	// EnableBasicAuth is enable-basic-auth: require HTTP basic
	// authentication with basic-auth-username and basic-auth-password.
	// Default false.
	EnableBasicAuth bool
	// BasicAuthUsername is basic-auth-username. Default admin, as
	// SeaTunnel.
	BasicAuthUsername string
	// BasicAuthPassword is basic-auth-password. Unlike SeaTunnel it has
	// no default: enable-basic-auth without a password is refused.
	BasicAuthPassword string
	// BearerTokenFile is bearer-token-file (stowage's): a file whose
	// content, surrounding white space removed, is a token accepted as
	// "Authorization: Bearer <token>".
	BearerTokenFile string
	// BearerTokenEnv is bearer-token-env (stowage's): the name of an
	// environment variable holding the token, instead of a file.
	BearerTokenEnv string
}

// DefaultHTTPSPort is seatunnel.engine.http.https-port's default.
const DefaultHTTPSPort = 8443

func defaultHTTP() HTTP {
	return HTTP{HTTPSPort: DefaultHTTPSPort, BasicAuthUsername: "admin"}
}

// TLS reports whether the API is served over TLS.
func (h *HTTP) TLS() bool { return h.EnableHTTPS }

// Authenticated reports whether a request must authenticate (basic or
// bearer).
func (h *HTTP) Authenticated() bool {
	return h.EnableBasicAuth || h.BearerTokenFile != "" || h.BearerTokenEnv != ""
}

// BearerToken reads the bearer token from bearer-token-file or
// bearer-token-env: "" with a nil error when neither is set. The error
// names the key and the file or variable, never the token.
func (h *HTTP) BearerToken() (string, error) {
	var tok, key string
	switch {
	case h.BearerTokenFile != "":
		key = httpKey + "bearer-token-file"
		b, err := os.ReadFile(h.BearerTokenFile)
		if err != nil {
			return "", &Error{Key: key, Err: kinded(ErrInvalid, "cannot read the token file: "+err.Error())}
		}
		tok = string(b)
	case h.BearerTokenEnv != "":
		key = httpKey + "bearer-token-env"
		v, ok := os.LookupEnv(h.BearerTokenEnv)
		if !ok {
			return "", &Error{Key: key, Err: kinded(ErrInvalid, "environment variable "+h.BearerTokenEnv+" is not set")}
		}
		tok = v
	default:
		return "", nil
	}
	tok = strings.TrimSpace(tok)
	if len(tok) < minTokenLen {
		return "", &Error{Key: key, Err: kinded(ErrInvalid, "the token is shorter than 16 characters")}
	}
	return tok, nil
}

// minTokenLen is the shortest bearer token accepted.
const minTokenLen = 16

const httpKey = "seatunnel.engine.http."

// httpSchema is seatunnel.engine.http: the keys of SeaTunnel's REST API
// v2 block. stowage acts on the TLS and authentication keys; the plain
// listener's keys (enable-http, port, context-path, dynamic ports) have
// no effect: stowage node --http gives the address.
var httpSchema = block(map[string]*schema{
	"enable-http":          noEffect,
	"port":                 noEffect,
	"context-path":         noEffect,
	"enable-dynamic-port":  noEffect,
	"port-range":           noEffect,
	"enable-https":         inEffect,
	"https-port":           inEffect,
	"key-store-path":       inEffect,
	"key-store-password":   inEffect,
	"key-manager-password": inEffect,
	"trust-store-path":     inEffect,
	"trust-store-password": inEffect,
	"cert-file":            inEffect,
	"key-file":             inEffect,
	"client-ca-file":       inEffect,
	"enable-basic-auth":    inEffect,
	"basic-auth-username":  inEffect,
	"basic-auth-password":  inEffect,
	"bearer-token-file":    inEffect,
	"bearer-token-env":     inEffect,
})

// readHTTP reads seatunnel.engine.http into h.
func readHTTP(h *HTTP, n node) error {
	var r reader
	r.bool(&h.EnableHTTPS, n.child("enable-https"))
	r.int(&h.HTTPSPort, n.child("https-port"))
	r.str(&h.KeyStorePath, n.child("key-store-path"))
	r.str(&h.KeyStorePassword, n.child("key-store-password"))
	r.str(&h.KeyManagerPassword, n.child("key-manager-password"))
	r.str(&h.TrustStorePath, n.child("trust-store-path"))
	r.str(&h.TrustStorePassword, n.child("trust-store-password"))
	r.str(&h.CertFile, n.child("cert-file"))
	r.str(&h.KeyFile, n.child("key-file"))
	r.str(&h.ClientCAFile, n.child("client-ca-file"))
	r.bool(&h.EnableBasicAuth, n.child("enable-basic-auth"))
	r.str(&h.BasicAuthUsername, n.child("basic-auth-username"))
	r.str(&h.BasicAuthPassword, n.child("basic-auth-password"))
	r.str(&h.BearerTokenFile, n.child("bearer-token-file"))
	r.str(&h.BearerTokenEnv, n.child("bearer-token-env"))
	return r.err
}

// http checks seatunnel.engine.http. Files are not opened here.
func (v *validator) http(h *HTTP) {
	k := func(name string) string { return httpKey + name }
	if h.HTTPSPort < 0 || h.HTTPSPort > 65535 {
		v.add(k("https-port"), "%d is not a port (0..65535)", h.HTTPSPort)
	}
	// The TLS keys are checked only when TLS is on: SeaTunnel's documents
	// show them filled in with enable-https false.
	if h.EnableHTTPS {
		store, pem := h.KeyStorePath != "", h.CertFile != "" || h.KeyFile != ""
		switch {
		case store && pem:
			v.add(k("key-store-path"), "give either key-store-path or cert-file and key-file, not both")
		case pem && (h.CertFile == "" || h.KeyFile == ""):
			v.add(k("cert-file"), "cert-file and key-file go together")
		case !store && !pem:
			v.add(k("enable-https"), "true needs key-store-path (PKCS#12) or cert-file and key-file (PEM)")
		}
		if store && h.KeyManagerPassword != "" && h.KeyManagerPassword != h.KeyStorePassword {
			v.add(k("key-manager-password"), "stowage reads a PKCS#12 store with one password: key-manager-password must equal key-store-password or be left out")
		}
		if h.TrustStorePath != "" && h.ClientCAFile != "" {
			v.add(k("trust-store-path"), "give either trust-store-path or client-ca-file, not both")
		}
	}
	if h.EnableBasicAuth {
		if h.BasicAuthUsername == "" || strings.Contains(h.BasicAuthUsername, ":") {
			v.add(k("basic-auth-username"), "must be set and hold no ':'")
		}
		if h.BasicAuthPassword == "" {
			v.add(k("basic-auth-password"), "enable-basic-auth needs a password (stowage has no default password)")
		}
	}
	if h.BearerTokenFile != "" && h.BearerTokenEnv != "" {
		v.add(k("bearer-token-file"), "give either bearer-token-file or bearer-token-env, not both")
	}
}

// httpNode is seatunnel.engine.http for Dump, passwords redacted; nil
// when every value is the default.
func (h *HTTP) httpNode() *yaml.Node {
	if *h == defaultHTTP() {
		return nil
	}
	secret := func(s string) *yaml.Node {
		if s == "" {
			return str("")
		}
		return str(Redacted)
	}
	n := mapping(
		"enable-https", boolean(h.EnableHTTPS),
		"https-port", num(h.HTTPSPort),
		"enable-basic-auth", boolean(h.EnableBasicAuth),
		"basic-auth-username", str(h.BasicAuthUsername),
		"basic-auth-password", secret(h.BasicAuthPassword),
	)
	opt := func(key, val string, n2 *yaml.Node) {
		if val != "" {
			n.Content = append(n.Content, str(key), n2)
		}
	}
	opt("key-store-path", h.KeyStorePath, str(h.KeyStorePath))
	opt("key-store-password", h.KeyStorePassword, secret(h.KeyStorePassword))
	opt("key-manager-password", h.KeyManagerPassword, secret(h.KeyManagerPassword))
	opt("trust-store-path", h.TrustStorePath, str(h.TrustStorePath))
	opt("trust-store-password", h.TrustStorePassword, secret(h.TrustStorePassword))
	opt("cert-file", h.CertFile, str(h.CertFile))
	opt("key-file", h.KeyFile, str(h.KeyFile))
	opt("client-ca-file", h.ClientCAFile, str(h.ClientCAFile))
	opt("bearer-token-file", h.BearerTokenFile, str(h.BearerTokenFile))
	opt("bearer-token-env", h.BearerTokenEnv, str(h.BearerTokenEnv))
	return n
}
