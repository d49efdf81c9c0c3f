package httpapi_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stowage/stowage/httpapi"
)

// request sends method path with the given Authorization header ("" for
// none) and Host ("" for the server's own), and returns the status, the
// WWW-Authenticate header and the body.
func request(t *testing.T, srv *httptest.Server, method, path, auth, host string) (int, string, string) {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	if host != "" {
		req.Host = host
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("WWW-Authenticate"), string(b)
}

func basic(user, pass string) string {
	r, _ := http.NewRequest(http.MethodGet, "/", nil)
	r.SetBasicAuth(user, pass)
	return r.Header.Get("Authorization")
}

const (
	testUser     = "operator"
	testPassword = "correct horse battery staple"
	testToken    = "0123456789abcdef0123456789abcdef"
)

// Every endpoint but /healthz answers 401, with a challenge for each
// scheme and the same body whatever was wrong, unless the request carries
// the configured user and password or the bearer token.
func TestAuthRequired(t *testing.T) {
	n := openNode(t, t.TempDir())
	srv := httptest.NewServer(httpapi.Handler(n, httpapi.WithSecurity(httpapi.Security{
		BasicUser: testUser, BasicPassword: testPassword, BearerToken: testToken,
	})))
	defer srv.Close()

	wrong := map[string]string{
		"none":                     "",
		"wrong password":           basic(testUser, testPassword+"x"),
		"wrong user":               basic("admin", testPassword),
		"password as user":         basic(testPassword, testUser),
		"empty password":           basic(testUser, ""),
		"password prefix":          basic(testUser, testPassword[:5]),
		"wrong token":              "Bearer " + testToken[:31] + "0",
		"token prefix":             "Bearer " + testToken[:16],
		"token as basic password":  basic(testUser, testToken),
		"password as bearer token": "Bearer " + testPassword,
		"unknown scheme":           "Digest " + testToken,
		"malformed basic":          "Basic !!!",
	}
	paths := []string{"/v1/maps", "/v1/cluster", "/v1/status", "/", "/ui/app.js", "/metrics", "/v1/maps/engine_a/entries/k"}
	var firstBody string
	for name, auth := range wrong {
		for _, p := range paths {
			code, challenge, body := request(t, srv, http.MethodGet, p, auth, "")
			if code != http.StatusUnauthorized {
				t.Errorf("%s, GET %s: %d, want 401", name, p, code)
			}
			if !strings.Contains(challenge, `Basic realm="stowage"`) || !strings.Contains(challenge, `Bearer realm="stowage"`) {
				t.Errorf("%s, GET %s: WWW-Authenticate %q", name, p, challenge)
			}
			if firstBody == "" {
				firstBody = body
			} else if body != firstBody {
				t.Errorf("%s, GET %s: the answer %q differs from %q: it tells what was wrong", name, p, body, firstBody)
			}
		}
		if code, _, _ := request(t, srv, http.MethodPut, "/v1/maps/engine_a/entries/k", auth, ""); code != http.StatusUnauthorized {
			t.Errorf("%s, PUT: %d, want 401", name, code)
		}
	}
	if strings.Contains(firstBody, testPassword) || strings.Contains(firstBody, testToken) {
		t.Errorf("the 401 answer shows a secret: %s", firstBody)
	}
	for name, auth := range map[string]string{"basic": basic(testUser, testPassword), "bearer": "Bearer " + testToken, "bearer, lower case": "bearer " + testToken} {
		for _, p := range paths[:6] {
			if code, _, body := request(t, srv, http.MethodGet, p, auth, ""); code != http.StatusOK {
				t.Errorf("%s, GET %s: %d %s, want 200", name, p, code, body)
			}
		}
	}
	// Kubernetes probes carry no credentials.
	if code, _, body := request(t, srv, http.MethodGet, "/healthz", "", ""); code != http.StatusOK {
		t.Errorf("GET /healthz without credentials: %d %s, want 200", code, body)
	}
}

// Only the scheme that is configured is accepted: with basic alone a
// bearer header is refused however it looks, and the challenge names
// basic alone.
func TestAuthBasicOnly(t *testing.T) {
	n := openNode(t, t.TempDir())
	srv := httptest.NewServer(httpapi.Handler(n, httpapi.WithSecurity(httpapi.Security{BasicUser: testUser, BasicPassword: testPassword})))
	defer srv.Close()
	code, challenge, _ := request(t, srv, http.MethodGet, "/v1/maps", "Bearer ", "")
	if code != http.StatusUnauthorized || challenge != `Basic realm="stowage", charset="UTF-8"` {
		t.Errorf("empty bearer token: %d, challenge %q; want 401 with a basic challenge", code, challenge)
	}
	if code, _, _ := request(t, srv, http.MethodGet, "/v1/maps", basic(testUser, testPassword), ""); code != http.StatusOK {
		t.Errorf("right user and password: %d, want 200", code)
	}
}

// On a loopback bind a request must name a loopback host: a page of
// another site whose name resolves to 127.0.0.1 (DNS rebinding) is
// refused with 421, localhost, 127.x and [::1] with any port are served.
func TestLoopbackHostOnly(t *testing.T) {
	n := openNode(t, t.TempDir())
	srv := httptest.NewServer(httpapi.Handler(n, httpapi.WithSecurity(httpapi.Security{LoopbackHost: true})))
	defer srv.Close()
	for _, host := range []string{"attacker.example", "attacker.example:5802", "127.0.0.1.nip.io", "localhost.attacker.example:80",
		"192.168.1.5:5802", "[fe80::1]:5802", "0.0.0.0:5802", "localhostx"} {
		for _, p := range []string{"/v1/maps", "/healthz", "/"} {
			if code, _, _ := request(t, srv, http.MethodGet, p, "", host); code != http.StatusMisdirectedRequest {
				t.Errorf("Host %s, GET %s: %d, want 421", host, p, code)
			}
		}
		if code, _, _ := request(t, srv, http.MethodPut, "/v1/maps/engine_a/entries/k", "", host); code != http.StatusMisdirectedRequest {
			t.Errorf("Host %s, PUT: %d, want 421", host, code)
		}
	}
	for _, host := range []string{"localhost", "localhost:5802", "LocalHost:1", "localhost.", "127.0.0.1", "127.0.0.1:5802", "127.1.2.3:80", "[::1]", "[::1]:5802"} {
		if code, _, body := request(t, srv, http.MethodGet, "/v1/maps", "", host); code != http.StatusOK {
			t.Errorf("Host %s: %d %s, want 200", host, code, body)
		}
	}
}

func TestLoopbackAddr(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:5802": true, "localhost:0": true, "[::1]:5802": true, "127.0.0.2:1": true,
		":5802": false, "0.0.0.0:5802": false, "[::]:5802": false, "10.0.0.1:5802": false, "example.com:5802": false, "127.0.0.1": false,
	} {
		if got := httpapi.LoopbackAddr(addr); got != want {
			t.Errorf("LoopbackAddr(%q) = %v, want %v", addr, got, want)
		}
	}
}
