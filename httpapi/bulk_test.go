package httpapi_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stowage/stowage"
	"github.com/stowage/stowage/serde"
)

// bulkBody is a bulk request with n entries (put) or keys.
func bulkBody(t *testing.T, put bool, keys []string, val func(k string) string) string {
	t.Helper()
	var v any
	if put {
		es := make([]map[string]string, len(keys))
		for i, k := range keys {
			es[i] = map[string]string{"key": k, "value": val(k)}
		}
		v = map[string]any{"entries": es}
	} else {
		v = map[string]any{"keys": keys}
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// put, get and remove of many entries in one request each; values as
// text or base64.
func TestBulkEndpoints(t *testing.T) {
	n, srv := node(t, t.TempDir())
	base := srv.URL + "/v1/maps/engine_bulk/bulk/"
	keys := make([]string, 50)
	for i := range keys {
		keys[i] = fmt.Sprintf("job-%02d", i)
	}
	code, body := do(t, http.MethodPost, base+"put", bulkBody(t, true, keys, func(k string) string { return "v-" + k }))
	if code != http.StatusOK || !strings.Contains(body, `"written": 50`) {
		t.Fatalf("bulk put: %d %s", code, body)
	}
	m, err := stowage.GetMap(context.Background(), n, "engine_bulk", serde.String(), serde.String())
	if err != nil {
		t.Fatal(err)
	}
	if v, ok, err := m.Get(context.Background(), "job-07"); err != nil || !ok || v != "v-job-07" {
		t.Fatalf("after bulk put, job-07 = %q, %v, %v", v, ok, err)
	}
	bin := []byte{0, 1, 2, 255}
	code, body = do(t, http.MethodPost, base+"put?encoding=base64&ttl=3600",
		bulkBody(t, true, []string{"bin"}, func(string) string { return base64.StdEncoding.EncodeToString(bin) }))
	if code != http.StatusOK {
		t.Fatalf("bulk put base64: %d %s", code, body)
	}

	var got struct {
		Entries []struct{ Key, Value string }
		Missing []string
	}
	code, body = do(t, http.MethodPost, base+"get", bulkBody(t, false, []string{"job-01", "nope", "job-02", "nope"}, nil))
	if code != http.StatusOK {
		t.Fatalf("bulk get: %d %s", code, body)
	}
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Entries) != 2 || got.Entries[0].Key != "job-01" || got.Entries[0].Value != "v-job-01" || got.Entries[1].Key != "job-02" ||
		len(got.Missing) != 1 || got.Missing[0] != "nope" {
		t.Fatalf("bulk get = %s", body)
	}
	code, body = do(t, http.MethodPost, base+"get?encoding=base64", bulkBody(t, false, []string{"bin"}, nil))
	if err := json.Unmarshal([]byte(body), &got); err != nil || code != http.StatusOK || len(got.Entries) != 1 ||
		got.Entries[0].Value != base64.StdEncoding.EncodeToString(bin) {
		t.Fatalf("bulk get base64: %d %s", code, body)
	}

	code, body = do(t, http.MethodPost, base+"remove", bulkBody(t, false, append(keys[:10:10], "nope"), nil))
	if code != http.StatusOK || !strings.Contains(body, `"removed": 10`) {
		t.Fatalf("bulk remove: %d %s", code, body)
	}
	if size, _ := m.Size(context.Background()); size != 41 {
		t.Fatalf("size after removing 10 of 51: %d", size)
	}
}

// A bulk request over the limits is refused naming the limit, and bad
// requests are a 400 naming what is wrong; none writes anything.
func TestBulkLimits(t *testing.T) {
	n, srv := node(t, t.TempDir())
	base := srv.URL + "/v1/maps/engine_lim/bulk/"
	big := `{"entries":[{"key":"k","value":"` + strings.Repeat("x", 33<<20) + `"}]}`
	code, body := do(t, http.MethodPost, base+"put", big)
	if code != http.StatusRequestEntityTooLarge || !strings.Contains(body, "33554432") {
		t.Errorf("a 33 MiB body: %d %.200s; want 413 naming the limit", code, body)
	}
	many := make([]string, 10001)
	for i := range many {
		many[i] = fmt.Sprint(i)
	}
	code, body = do(t, http.MethodPost, base+"put", bulkBody(t, true, many, func(string) string { return "v" }))
	if code != http.StatusBadRequest || !strings.Contains(body, "10000") {
		t.Errorf("10001 entries: %d %s; want 400 naming the limit", code, body)
	}
	for _, c := range []struct{ path, body, want string }{
		{"put", `{"entries":[{"key":"a","value":"1"},{"key":"","value":"2"}]}`, "entries 1"},
		{"put", `{"keys":["a"]}`, "a put takes"},
		{"put?encoding=base64", `{"entries":[{"key":"a","value":"!!"}]}`, `key \"a\"`},
		{"put?encoding=hex", `{"entries":[]}`, "hex"},
		{"put?ttl=-1", `{"entries":[]}`, "ttl"},
		{"get?timeout=1y", `{"keys":["a"]}`, "timeout"},
		{"get", `{"keys":["a"],"extra":1}`, "extra"},
		{"remove", `not json`, "not a bulk request"},
	} {
		code, body := do(t, http.MethodPost, base+c.path, c.body)
		if code != http.StatusBadRequest || !strings.Contains(body, c.want) {
			t.Errorf("%s %s: %d %s; want 400 naming %s", c.path, c.body, code, body, c.want)
		}
	}
	if code, _ := do(t, http.MethodGet, srv.URL+"/v1/maps/engine_lim/entries/a", ""); code != http.StatusNotFound {
		t.Errorf("a refused bulk put wrote key a: GET answered %d", code)
	}
	_ = n
}

// A key that fails (here: locked by another owner past the request's
// timeout) is named with its error; the other keys are written.
func TestBulkPerKeyErrors(t *testing.T) {
	n, srv := node(t, t.TempDir())
	ctx := context.Background()
	m, err := stowage.GetMap(ctx, n, "engine_pk", serde.String(), serde.String())
	if err != nil {
		t.Fatal(err)
	}
	holder := stowage.WithLockOwner(ctx, "other")
	if _, err := m.Lock(holder, "locked", time.Minute); err != nil {
		t.Fatal(err)
	}
	code, body := do(t, http.MethodPost, srv.URL+"/v1/maps/engine_pk/bulk/put?timeout=300ms",
		bulkBody(t, true, []string{"a", "locked", "b"}, func(k string) string { return "v" + k }))
	var ans struct {
		Failed []struct{ Key, Error string }
	}
	if err := json.Unmarshal([]byte(body), &ans); err != nil {
		t.Fatalf("%d %s: %v", code, body, err)
	}
	if code != http.StatusGatewayTimeout || len(ans.Failed) != 1 || ans.Failed[0].Key != "locked" || ans.Failed[0].Error == "" {
		t.Fatalf("bulk put with a locked key: %d %s; want 504 naming key locked", code, body)
	}
	for _, k := range []string{"a", "b"} {
		if v, ok, err := m.Get(ctx, k); err != nil || !ok || v != "v"+k {
			t.Errorf("%s = %q, %v, %v; want written", k, v, ok, err)
		}
	}
	if _, ok, _ := m.Get(ctx, "locked"); ok {
		t.Error("the locked key was written")
	}
}
