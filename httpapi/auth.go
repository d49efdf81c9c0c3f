package httpapi

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"net"
	"net/http"
	"strings"

	"github.com/stowage/stowage/config"
)

// Security is what the handler checks on every request before it routes
// it (WithSecurity). The zero value checks nothing.
type Security struct {
	// BasicUser and BasicPassword, when BasicPassword is set, are accepted
	// as "Authorization: Basic".
	BasicUser, BasicPassword string
	// BearerToken, when set, is accepted as "Authorization: Bearer".
	// With both set either is enough.
	BearerToken string
	// LoopbackHost refuses, with 421, a request whose Host header does not
	// name the loopback interface (localhost, 127.0.0.0/8, [::1], any
	// port): a server bound to loopback is reachable from a browser on the
	// same machine, and a page of another site whose name an attacker
	// points at 127.0.0.1 (DNS rebinding) sends its own name as Host.
	LoopbackHost bool
}

// SecurityFrom is the authentication seatunnel.engine.http configures:
// basic when enable-basic-auth is on, a bearer token when
// bearer-token-file or bearer-token-env is set (read now). The error names
// the key, never the token.
func SecurityFrom(h *config.HTTP) (Security, error) {
	var s Security
	if h.EnableBasicAuth {
		s.BasicUser, s.BasicPassword = h.BasicAuthUsername, h.BasicAuthPassword
		if s.BasicPassword == "" {
			return Security{}, errors.New("seatunnel.engine.http.basic-auth-password: enable-basic-auth needs a password")
		}
	}
	tok, err := h.BearerToken()
	if err != nil {
		return Security{}, err
	}
	s.BearerToken = tok
	return s, nil
}

// Authenticates reports whether s requires credentials.
func (s Security) Authenticates() bool { return s.BasicPassword != "" || s.BearerToken != "" }

// WithSecurity makes the handler check s on every request. /healthz is
// answered without credentials (a Kubernetes probe has none; it tells
// only whether the member serves), but the Host check applies to it too.
func WithSecurity(s Security) Option {
	return func(a *api) { a.sec = s }
}

// guard wraps next with the checks of s.
func guard(s Security, next http.Handler) http.Handler {
	if !s.LoopbackHost && !s.Authenticates() {
		return next
	}
	want := digests{
		user:  sha256.Sum256([]byte(s.BasicUser)),
		pass:  sha256.Sum256([]byte(s.BasicPassword)),
		token: sha256.Sum256([]byte(s.BearerToken)),
	}
	challenge := ""
	if s.BasicPassword != "" {
		challenge = `Basic realm="stowage", charset="UTF-8"`
	}
	if s.BearerToken != "" {
		if challenge != "" {
			challenge += ", "
		}
		challenge += `Bearer realm="stowage"`
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.LoopbackHost && !loopbackHost(r.Host) {
			writeJSON(w, http.StatusMisdirectedRequest, map[string]string{"error": "this server answers only requests addressed to localhost, 127.0.0.1 or [::1]"})
			return
		}
		if s.Authenticates() && !(r.Method == http.MethodGet && r.URL.Path == "/healthz") && !s.authorized(r, &want) {
			w.Header().Set("WWW-Authenticate", challenge)
			writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "authentication required"})
			return
		}
		next.ServeHTTP(w, r)
	})
}

// digests are the SHA-256 digests of the configured credentials.
type digests struct{ user, pass, token [sha256.Size]byte }

// authorized compares the request's credentials with the configured ones
// in constant time: the digests of what was sent and what is expected are
// compared, so that neither the length nor the first differing byte shows
// in the time taken, and user and password are both compared whatever
// the first gave.
func (s Security) authorized(r *http.Request, want *digests) bool {
	h := r.Header.Get("Authorization")
	scheme, cred, _ := strings.Cut(h, " ")
	switch {
	case s.BasicPassword != "" && strings.EqualFold(scheme, "Basic"):
		u, p, ok := r.BasicAuth()
		if !ok {
			return false
		}
		du, dp := sha256.Sum256([]byte(u)), sha256.Sum256([]byte(p))
		return subtle.ConstantTimeCompare(du[:], want.user[:])&subtle.ConstantTimeCompare(dp[:], want.pass[:]) == 1
	case s.BearerToken != "" && strings.EqualFold(scheme, "Bearer"):
		dt := sha256.Sum256([]byte(strings.TrimSpace(cred)))
		return subtle.ConstantTimeCompare(dt[:], want.token[:]) == 1
	}
	return false
}

// loopbackHost reports whether a Host header names the loopback
// interface: localhost (any case, a trailing dot allowed), an address in
// 127.0.0.0/8 or ::1, with or without a port.
func loopbackHost(host string) bool {
	h := host
	if sh, _, err := net.SplitHostPort(host); err == nil {
		h = sh
	}
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	if strings.EqualFold(strings.TrimSuffix(h, "."), "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// LoopbackAddr reports whether a listen address (host:port) binds only
// the loopback interface: its host is localhost or a loopback IP. An
// empty host (all interfaces) is not.
func LoopbackAddr(addr string) bool {
	h, _, err := net.SplitHostPort(addr)
	if err != nil || h == "" {
		return false
	}
	return loopbackHost(h)
}
