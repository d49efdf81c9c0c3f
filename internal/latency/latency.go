// Package latency is a latency model for the in-process object-store test
// servers and for benchmarks: every request waits a set time before it is
// served, as a real object store answers a GET, PUT or LIST in tens of
// milliseconds, and the model counts, per kind of request, how many were
// served and how many were in flight at once at most. Tests assert
// overlap from the server's view with it (more than one read in flight
// during a load), never by timing; benchmarks show what parallel reads
// and pipelined writes buy, and a regression to one request at a time.
//
// A Model wraps a server's handler (Handler) or, for a server without a
// listener, a client's transport (Transport). It is safe for concurrent
// use, and its delay may change at any time.
package latency

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Kinds of request, as Kind names them.
const (
	List   = "LIST"   // a listing of a bucket or folder
	Get    = "GET"    // a read of an object (or of its metadata)
	Put    = "PUT"    // an upload, or a part of one
	Delete = "DELETE" // a removal
	Other  = "OTHER"
)

// Kind names what an object-store request does, from its method and
// query: a GET with a listing parameter (list-type, prefix, delimiter,
// marker, continuation-token, max-keys) or of a bucket's object list
// (GCS: /storage/v1/b/<bucket>/o) is a List; GET and HEAD are reads;
// PUT and POST are uploads (multipart steps included).
func Kind(r *http.Request) string {
	switch r.Method {
	case http.MethodGet:
		q := r.URL.Query()
		for _, k := range []string{"list-type", "prefix", "delimiter", "marker", "continuation-token", "max-keys"} {
			if q.Has(k) {
				return List
			}
		}
		if strings.HasPrefix(r.URL.Path, "/storage/v1/b/") && strings.HasSuffix(r.URL.Path, "/o") {
			return List
		}
		return Get
	case http.MethodHead:
		return Get
	case http.MethodPut, http.MethodPost:
		return Put
	case http.MethodDelete:
		return Delete
	}
	return Other
}

// Model is a per-request delay and the counters of what it delayed.
type Model struct {
	delay atomic.Int64 // nanoseconds

	mu    sync.Mutex
	kinds map[string]*counter
	all   counter
}

type counter struct {
	served, now, max int64
}

// New returns a model that delays every request by d (0: none).
func New(d time.Duration) *Model {
	m := &Model{kinds: map[string]*counter{}}
	m.SetDelay(d)
	return m
}

// SetDelay changes the delay of requests that start from now on.
func (m *Model) SetDelay(d time.Duration) { m.delay.Store(int64(max(d, 0))) }

// Delay returns the delay of a request starting now.
func (m *Model) Delay() time.Duration { return time.Duration(m.delay.Load()) }

// Stats are a model's counters, for every request or one kind.
type Stats struct {
	Served      int64 // requests finished
	InFlight    int64 // requests begun and not finished
	MaxInFlight int64 // the most in flight at once since the last Reset
}

// Stats returns the counters of every request.
func (m *Model) Stats() Stats {
	m.mu.Lock()
	defer m.mu.Unlock()
	return Stats{Served: m.all.served, InFlight: m.all.now, MaxInFlight: m.all.max}
}

// KindStats returns the counters of one kind of request (see Kind).
func (m *Model) KindStats(kind string) Stats {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.kinds[kind]
	if c == nil {
		return Stats{}
	}
	return Stats{Served: c.served, InFlight: c.now, MaxInFlight: c.max}
}

// Reset zeroes the counts of served requests and sets each most-in-flight
// to what is in flight now.
func (m *Model) Reset() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.all.served, m.all.max = 0, m.all.now
	for _, c := range m.kinds {
		c.served, c.max = 0, c.now
	}
}

// begin counts a request of kind in flight and returns its end.
func (m *Model) begin(kind string) func() {
	m.mu.Lock()
	c := m.kinds[kind]
	if c == nil {
		c = &counter{}
		m.kinds[kind] = c
	}
	for _, c := range []*counter{c, &m.all} {
		c.now++
		c.max = max(c.max, c.now)
	}
	m.mu.Unlock()
	return func() {
		m.mu.Lock()
		for _, c := range []*counter{c, &m.all} {
			c.now--
			c.served++
		}
		m.mu.Unlock()
	}
}

// wait sleeps the delay, or less if done is closed first.
func (m *Model) wait(done <-chan struct{}) {
	d := m.Delay()
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-done:
	}
}

// Handler returns next wrapped: each request is counted in flight from
// its start, waits the delay, and is then served by next.
func (m *Model) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer m.begin(Kind(r))()
		m.wait(r.Context().Done())
		next.ServeHTTP(w, r)
	})
}

// Transport returns base (http.DefaultTransport if nil) wrapped: each
// request is counted in flight from its start until its response's body
// is closed, and waits the delay before it is sent.
func (m *Model) Transport(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return &transport{m: m, base: base}
}

type transport struct {
	m    *Model
	base http.RoundTripper
}

func (t *transport) RoundTrip(r *http.Request) (*http.Response, error) {
	end := t.m.begin(Kind(r))
	t.m.wait(r.Context().Done())
	resp, err := t.base.RoundTrip(r)
	if err != nil || resp.Body == nil {
		end()
		return resp, err
	}
	resp.Body = &endBody{ReadCloser: resp.Body, end: end}
	return resp, nil
}

// endBody ends a request's count when its body is closed.
type endBody struct {
	io.ReadCloser
	once sync.Once
	end  func()
}

func (b *endBody) Close() error {
	err := b.ReadCloser.Close()
	b.once.Do(b.end)
	return err
}
