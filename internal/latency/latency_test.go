package latency

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

func TestKind(t *testing.T) {
	for target, want := range map[string]string{
		"GET /bucket?list-type=2&prefix=a/":     List,
		"GET /bucket/?prefix=a/&delimiter=/":    List,
		"GET /storage/v1/b/bk/o?alt=json":       List,
		"GET /bucket/a/b":                       Get,
		"HEAD /bucket/a/b":                      Get,
		"PUT /bucket/a/b":                       Put,
		"POST /bucket/a/b?uploads":              Put,
		"DELETE /bucket/a/b":                    Delete,
		"GET /storage/v1/b/bk/o/obj%2Fname?x=y": Get,
	} {
		method, path, _ := cut(target)
		r := httptest.NewRequest(method, path, nil)
		if got := Kind(r); got != want {
			t.Errorf("Kind(%s) = %s, want %s", target, got, want)
		}
	}
}

func cut(s string) (string, string, bool) {
	for i := range s {
		if s[i] == ' ' {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

// TestHandlerCountsOverlap serves requests that wait on each other (none
// can finish before all started), so that the most in flight is what the
// clients sent at once, and one after another, where it stays 1.
func TestHandlerCountsOverlap(t *testing.T) {
	m := New(time.Millisecond)
	const n = 4
	var arrived sync.WaitGroup
	arrived.Add(n)
	release := make(chan struct{})
	srv := httptest.NewServer(m.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Has("together") {
			arrived.Done()
			<-release
		}
		_, _ = io.WriteString(w, "ok")
	})))
	defer srv.Close()
	get := func(q string) {
		resp, err := http.Get(srv.URL + "/b/k" + q)
		if err != nil {
			t.Error(err)
			return
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); get("?together=1") }()
	}
	arrived.Wait()
	close(release)
	wg.Wait()
	if st := m.KindStats(Get); st.MaxInFlight != n || st.Served != n || st.InFlight != 0 {
		t.Fatalf("after %d requests at once: %+v", n, st)
	}
	m.Reset()
	for i := 0; i < n; i++ {
		get("")
	}
	if st := m.KindStats(Get); st.MaxInFlight != 1 || st.Served != n {
		t.Fatalf("after %d requests one at a time: %+v", n, st)
	}
	if st := m.KindStats(List); st.Served != 0 {
		t.Fatalf("lists counted: %+v", st)
	}
}

// TestDelay checks that a request waits at least the delay (a lower
// bound only: nothing here depends on how fast the machine is).
func TestDelay(t *testing.T) {
	m := New(0)
	m.SetDelay(30 * time.Millisecond)
	rt := m.Transport(roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 200, Body: io.NopCloser(nil), Request: r}, nil
	}))
	start := time.Now()
	resp, err := rt.RoundTrip(httptest.NewRequest(http.MethodPut, "/b/k", nil))
	if err != nil {
		t.Fatal(err)
	}
	if st := m.KindStats(Put); st.InFlight != 1 {
		t.Fatalf("before the body is closed: %+v", st)
	}
	resp.Body.Close()
	if took := time.Since(start); took < 30*time.Millisecond {
		t.Fatalf("request took %v with a delay of 30ms", took)
	}
	if st := m.KindStats(Put); st.InFlight != 0 || st.Served != 1 {
		t.Fatalf("after the body is closed: %+v", st)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
