package httpapi_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/stowage/stowage/httpapi"
)

// benchPuts sends b.N PUTs of a 256-byte value, one after another on one
// kept-alive connection, through the API's own server (NewServer) in
// front of h, and reports the time of each.
func benchPuts(b *testing.B, h http.Handler) {
	srv := httptest.NewUnstartedServer(nil)
	srv.Config = httpapi.NewServer(h, nil, httpapi.DefaultTimeouts(), nil)
	srv.Start()
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	value := bytes.Repeat([]byte("v"), 256)
	b.SetBytes(int64(len(value)))
	b.ResetTimer()
	for i := range b.N {
		req, err := http.NewRequest(http.MethodPut, srv.URL+"/v1/maps/m/entries/k"+strconv.Itoa(i%1000), bytes.NewReader(value))
		if err != nil {
			b.Fatal(err)
		}
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			b.Fatalf("PUT answered %s", resp.Status)
		}
	}
}

// BenchmarkPutLone is a lone client's PUT of an in-memory map's entry;
// BenchmarkPutFloor is the same request answered by a handler that reads
// the body and answers 204 at once, on the same server: their ratio is
// what the API adds to Go's HTTP round trip.
func BenchmarkPutLone(b *testing.B) {
	n := openNode(b, b.TempDir())
	benchPuts(b, httpapi.Handler(n))
}

func BenchmarkPutFloor(b *testing.B) {
	benchPuts(b, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusNoContent)
	}))
}
