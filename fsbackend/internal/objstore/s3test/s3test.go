// Package s3test runs S3 test servers for the s3 and cos back-end tests:
// gofakes3 in process behind httptest on 127.0.0.1, with hooks to inject
// faults (throttling, server errors) and to see the credentials requests
// are signed with; and, when STOWAGE_TEST_S3_ENDPOINT is set (by
// testdata/moto/start.sh), the external moto server. It is imported only
// by tests.
package s3test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// EndpointVar names the variable holding an external S3 endpoint (moto).
const EndpointVar = "STOWAGE_TEST_S3_ENDPOINT"

// Server is an in-process gofakes3 server. Its fields may be set before
// the first request; counters are safe for concurrent use.
type Server struct {
	URL     string
	backend *s3mem.Backend

	// FailFirst makes the first FailFirst requests answer 503 SlowDown.
	FailFirst atomic.Int64
	// FailAlways makes every request answer 500 InternalError while true.
	FailAlways atomic.Bool
	// LoseAnswers makes the next LoseAnswers PUTs take effect but answer
	// 503, as when a response is lost on the way back.
	LoseAnswers atomic.Int64

	requests atomic.Int64
	failed   atomic.Int64
	mu       sync.Mutex
	keyIDs   map[string]int
	methods  map[string]int
	vendor   map[string]int // "Name: value" of x-cos-*/x-oss-* headers on PUTs
}

var credRE = regexp.MustCompile(`Credential=([^/]+)/`)

// NewServer starts gofakes3 on 127.0.0.1; it is closed when t ends.
func NewServer(t testing.TB) *Server {
	t.Helper()
	s := &Server{backend: s3mem.New(), keyIDs: map[string]int{}, methods: map[string]int{}, vendor: map[string]int{}}
	fake := gofakes3.New(s.backend, gofakes3.WithLogger(gofakes3.DiscardLog()))
	inner := fake.Server()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.requests.Add(1)
		s.mu.Lock()
		if m := credRE.FindStringSubmatch(r.Header.Get("Authorization")); m != nil {
			s.keyIDs[m[1]]++
		}
		s.methods[r.Method]++
		if r.Method == http.MethodPut {
			for name, vals := range r.Header {
				if l := strings.ToLower(name); strings.HasPrefix(l, "x-cos-") || strings.HasPrefix(l, "x-oss-") {
					s.vendor[l+": "+strings.Join(vals, ",")]++
				}
			}
		}
		s.mu.Unlock()
		if s.FailAlways.Load() {
			s.failed.Add(1)
			writeError(w, http.StatusInternalServerError, "InternalError")
			return
		}
		if s.FailFirst.Load() > 0 && s.FailFirst.Add(-1) >= 0 {
			s.failed.Add(1)
			writeError(w, http.StatusServiceUnavailable, "SlowDown")
			return
		}
		if r.Method == http.MethodPut && s.LoseAnswers.Load() > 0 && s.LoseAnswers.Add(-1) >= 0 {
			rec := httptest.NewRecorder()
			inner.ServeHTTP(rec, r)
			s.failed.Add(1)
			writeError(w, http.StatusServiceUnavailable, "ServiceUnavailable")
			return
		}
		inner.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

func writeError(w http.ResponseWriter, status int, code string) {
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(status)
	fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>%s</Code><Message>injected</Message></Error>`, code)
}

// CreateBucket makes a bucket directly in the backing store.
func (s *Server) CreateBucket(t testing.TB, name string) {
	t.Helper()
	if err := s.backend.CreateBucket(name); err != nil {
		t.Fatalf("create bucket %s: %v", name, err)
	}
}

// Requests is the number of requests received.
func (s *Server) Requests() int64 { return s.requests.Load() }

// Failed is the number of requests answered with an injected error.
func (s *Server) Failed() int64 { return s.failed.Load() }

// KeyIDs returns how many requests were signed with each access key id.
func (s *Server) KeyIDs() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int, len(s.keyIDs))
	for k, v := range s.keyIDs {
		out[k] = v
	}
	return out
}

// Methods returns how many requests of each HTTP method arrived.
func (s *Server) Methods() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int, len(s.methods))
	for k, v := range s.methods {
		out[k] = v
	}
	return out
}

// VendorHeaders returns how many PUT requests carried each vendor header
// (x-cos-*, x-oss-*), keyed by "lower-case-name: value".
func (s *Server) VendorHeaders() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int, len(s.vendor))
	for k, v := range s.vendor {
		out[k] = v
	}
	return out
}

// ExternalEndpoint returns STOWAGE_TEST_S3_ENDPOINT, skipping t when it
// is unset.
func ExternalEndpoint(t testing.TB) string {
	t.Helper()
	ep := os.Getenv(EndpointVar)
	if ep == "" {
		t.Skipf("%s is not set (run: eval \"$(bash testdata/moto/start.sh)\")", EndpointVar)
	}
	return ep
}

var bucketSeq atomic.Int64

// CreateExternalBucket creates a fresh bucket on an external endpoint
// (moto accepts any credentials) and returns its name.
func CreateExternalBucket(t testing.TB, endpoint, prefix string) string {
	t.Helper()
	name := fmt.Sprintf("%s-%d-%d", prefix, os.Getpid(), bucketSeq.Add(1))
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	c := s3.New(s3.Options{
		Region:                     "us-east-1",
		BaseEndpoint:               aws.String(endpoint),
		UsePathStyle:               true,
		Credentials:                credentials.NewStaticCredentialsProvider("testing", "testing", ""),
		HTTPClient:                 &http.Client{Transport: tr},
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
	})
	if _, err := c.CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: aws.String(name)}); err != nil {
		t.Fatalf("create bucket %s on %s: %v", name, endpoint, err)
	}
	return name
}
