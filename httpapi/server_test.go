package httpapi_test

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stowage/stowage/httpapi"
)

// A handler that takes longer than the read deadlines (a write waiting
// for a new owner, say) keeps its request's context: the deadlines bound
// the client's sending, not the server's work.
func TestSlowHandlerKeepsContext(t *testing.T) {
	to := httpapi.DefaultTimeouts()
	to.ReadHeader, to.Read, to.BodyBase = 200*time.Millisecond, 200*time.Millisecond, 200*time.Millisecond
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusRequestTimeout)
			return
		}
		select {
		case <-r.Context().Done():
			http.Error(w, "context: "+r.Context().Err().Error(), http.StatusInternalServerError)
			return
		case <-time.After(time.Second):
		}
		io.WriteString(w, "done "+string(b))
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := httpapi.NewServer(h, nil, to, nil)
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(ln) }()
	defer func() { srv.Close(); <-done }()
	for _, m := range []string{http.MethodGet, http.MethodPut} {
		code, body := do(t, m, "http://"+ln.Addr().String()+"/", strings.Repeat("v", 10))
		if code != http.StatusOK {
			t.Errorf("%s taking 1 s with 200 ms read deadlines: %d %s, want 200", m, code, body)
		}
	}
}

// The server speaks HTTP/2 in clear text to a client that opens an
// HTTP/2 connection directly (prior knowledge): many requests share one
// connection, each with its own answer.
func TestServesH2CWithPriorKnowledge(t *testing.T) {
	var conns atomic.Int32
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		io.WriteString(w, r.Proto+" "+string(b))
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := httpapi.NewServer(h, nil, httpapi.DefaultTimeouts(), nil)
	srv.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(ln) }()
	defer func() { srv.Close(); <-done }()

	tr := &http.Transport{Protocols: new(http.Protocols)}
	tr.Protocols.SetUnencryptedHTTP2(true)
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	// One request first: the transport dials once per request that finds
	// no connection yet.
	if resp, err := client.Get("http://" + ln.Addr().String() + "/"); err != nil {
		t.Fatal(err)
	} else {
		resp.Body.Close()
	}
	var wg sync.WaitGroup
	errs := make(chan error, 32)
	for i := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest(http.MethodPut, "http://"+ln.Addr().String()+"/", strings.NewReader(fmt.Sprint(i)))
			resp, err := client.Do(req)
			if err != nil {
				errs <- err
				return
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if want := fmt.Sprintf("HTTP/2.0 %d", i); string(b) != want || resp.ProtoMajor != 2 {
				errs <- fmt.Errorf("answer %q over %s, want %q over HTTP/2.0", b, resp.Proto, want)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("33 requests took %d connections, want 1", n)
	}
	// HTTP/1.1 clients are served as before.
	code, body := do(t, http.MethodPut, "http://"+ln.Addr().String()+"/", "x")
	if code != http.StatusOK || body != "HTTP/1.1 x" {
		t.Errorf("HTTP/1.1: %d %q", code, body)
	}
}
