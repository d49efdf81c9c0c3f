package httpapi_test

import (
	"io"
	"net"
	"net/http"
	"strings"
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
