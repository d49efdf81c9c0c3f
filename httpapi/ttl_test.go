package httpapi_test

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// PUT ?ttl= gives the entry a time to live; a bad ttl is a 400 naming
// the value, and writes nothing.
func TestPutTTL(t *testing.T) {
	_, srv := node(t, t.TempDir())
	base := srv.URL + "/v1/maps/engine_jobs/entries/"
	for _, bad := range []string{"-1", "soon", "-5s", "999999999999"} {
		code, body := do(t, http.MethodPut, base+"bad?ttl="+bad, "x")
		if code != http.StatusBadRequest || !strings.Contains(body, bad) {
			t.Errorf("ttl=%s: %d %s; want 400 naming the value", bad, code, body)
		}
	}
	if code, _ := do(t, http.MethodGet, base+"bad", ""); code != http.StatusNotFound {
		t.Fatalf("a PUT with a bad ttl wrote the entry: GET answered %d", code)
	}
	for key, ttl := range map[string]string{"short": "200ms", "long": "3600", "never": "0"} {
		if code, body := do(t, http.MethodPut, base+key+"?ttl="+ttl, "v"); code != http.StatusNoContent {
			t.Fatalf("PUT %s?ttl=%s: %d %s", key, ttl, code, body)
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, _ := do(t, http.MethodGet, base+"short", "")
		if code == http.StatusNotFound {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("an entry PUT with ttl=200ms is still there after 30 s (GET: %d)", code)
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, key := range []string{"long", "never"} {
		if code, body := do(t, http.MethodGet, base+key, ""); code != http.StatusOK || body != "v" {
			t.Fatalf("GET %s = %d %q", key, code, body)
		}
	}
}
