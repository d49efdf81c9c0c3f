// Package s3test runs S3 test servers for the s3 and cos back-end tests:
// gofakes3 in process behind httptest on 127.0.0.1, with hooks to inject
// faults (throttling, server errors) and to see the credentials requests
// are signed with; and, when STOWAGE_TEST_S3_ENDPOINT is set (by
// testdata/moto/start.sh), the external moto server. It is imported only
// by tests.
//
// gofakes3 checks no signatures. A Server given Credentials does: every
// request must carry a SigV4 Authorization header for one of them, whose
// signature is what the SDK's own v4 signer computes for the signed
// headers with that secret, whose payload hash matches the body, and
// which carries exactly the credential's session token
// (X-Amz-Security-Token) when it has one and none otherwise; anything
// else is answered 403 (SignatureDoesNotMatch, InvalidAccessKeyId,
// InvalidToken, AccessDenied), as S3 does.
package s3test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/stowage/stowage/internal/latency"
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
	// Latency delays every request (none until its SetDelay) and counts
	// the requests in flight at once, by kind (latency.Kind).
	Latency *latency.Model

	creds map[string]Credential // by access key id; nil: signatures not checked

	requests atomic.Int64
	failed   atomic.Int64
	denied   atomic.Int64
	putBytes atomic.Int64 // body bytes of PUTs the store answered 200
	mu       sync.Mutex
	keyIDs   map[string]int
	methods  map[string]int
	vendor   map[string]int // "Name: value" of x-cos-*/x-oss-* headers on PUTs
}

// Credential is one access key a Server accepts.
type Credential struct {
	AccessKeyID, SecretAccessKey string
	// SessionToken, when set, must come as X-Amz-Security-Token on every
	// request signed with this key; when empty, none may come.
	SessionToken string
}

var credRE = regexp.MustCompile(`Credential=([^/]+)/`)

// NewServer starts gofakes3 on 127.0.0.1; it is closed when t ends. With
// creds, every request must be signed with one of them (see the package
// documentation); without, signatures are not checked.
func NewServer(t testing.TB, creds ...Credential) *Server {
	t.Helper()
	s := &Server{backend: s3mem.New(), keyIDs: map[string]int{}, methods: map[string]int{}, vendor: map[string]int{}, Latency: latency.New(0)}
	if len(creds) > 0 {
		s.creds = map[string]Credential{}
		for _, c := range creds {
			s.creds[c.AccessKeyID] = c
		}
	}
	fake := gofakes3.New(s.backend, gofakes3.WithLogger(gofakes3.DiscardLog()))
	inner := fake.Server()
	srv := httptest.NewServer(s.Latency.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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
		if s.creds != nil {
			if code, keyID := s.verify(r); code != "" {
				s.denied.Add(1)
				writeDenied(w, code, keyID)
				return
			}
		}
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
		if r.Method != http.MethodPut || r.Body == nil {
			inner.ServeHTTP(w, r)
			return
		}
		body := &countingBody{ReadCloser: r.Body}
		r.Body = body
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		inner.ServeHTTP(rec, r)
		if rec.status == http.StatusOK {
			s.putBytes.Add(body.n)
		}
	})))
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

func writeError(w http.ResponseWriter, status int, code string) {
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(status)
	fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>%s</Code><Message>injected</Message></Error>`, code)
}

// maxSkew is how far X-Amz-Date may be from the server's clock, as in S3.
const maxSkew = 15 * time.Minute

// verify checks r's SigV4 signature against the known credentials by
// signing a copy of the request, with only the headers r says it signed,
// with the SDK's v4 signer (as the S3 client configures it: no path
// escaping) and comparing the Authorization headers. It returns an S3
// error code, or "" when r is properly signed, and the key id used.
func (s *Server) verify(r *http.Request) (code, keyID string) {
	auth := r.Header.Get("Authorization")
	if auth == "" {
		return "AccessDenied", ""
	}
	rest, ok := strings.CutPrefix(auth, "AWS4-HMAC-SHA256 ")
	if !ok {
		return "AccessDenied", ""
	}
	fields := map[string]string{}
	for _, f := range strings.Split(rest, ",") {
		if k, v, ok := strings.Cut(strings.TrimSpace(f), "="); ok {
			fields[k] = v
		}
	}
	// Credential=AKID/20060102/region/s3/aws4_request
	scope := strings.Split(fields["Credential"], "/")
	if len(scope) != 5 || scope[3] != "s3" || scope[4] != "aws4_request" || fields["SignedHeaders"] == "" || fields["Signature"] == "" {
		return "AuthorizationHeaderMalformed", ""
	}
	keyID = scope[0]
	cred, known := s.creds[keyID]
	if !known {
		return "InvalidAccessKeyId", keyID
	}
	when, err := time.Parse("20060102T150405Z", r.Header.Get("X-Amz-Date"))
	if err != nil || when.Format("20060102") != scope[1] {
		return "AccessDenied", keyID
	}
	if d := time.Since(when); d > maxSkew || d < -maxSkew {
		return "RequestTimeTooSkewed", keyID
	}
	if tok := r.Header.Get("X-Amz-Security-Token"); tok != cred.SessionToken {
		return "InvalidToken", keyID
	}
	payloadHash := r.Header.Get("X-Amz-Content-Sha256")
	if payloadHash == "" {
		return "MissingSecurityHeader", keyID
	}
	var body []byte
	if r.Body != nil {
		if body, err = io.ReadAll(r.Body); err != nil {
			return "IncompleteBody", keyID
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	if payloadHash != "UNSIGNED-PAYLOAD" {
		sum := sha256.Sum256(body)
		if payloadHash != hex.EncodeToString(sum[:]) {
			return "XAmzContentSHA256Mismatch", keyID
		}
	}
	u := *r.URL
	u.Scheme, u.Host = "http", r.Host
	cp, err := http.NewRequest(r.Method, u.String(), nil)
	if err != nil {
		return "AccessDenied", keyID
	}
	cp.Host = r.Host
	for _, h := range strings.Split(fields["SignedHeaders"], ";") {
		switch h {
		case "host", "x-amz-date", "x-amz-security-token":
			// the signer sets these itself
		case "content-length":
			cp.ContentLength = r.ContentLength
		default:
			if v, ok := r.Header[http.CanonicalHeaderKey(h)]; ok {
				cp.Header[http.CanonicalHeaderKey(h)] = v
			}
		}
	}
	signer := v4.NewSigner(func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true })
	creds := aws.Credentials{AccessKeyID: cred.AccessKeyID, SecretAccessKey: cred.SecretAccessKey, SessionToken: cred.SessionToken}
	if err := signer.SignHTTP(context.Background(), creds, cp, payloadHash, "s3", scope[2], when); err != nil {
		return "AccessDenied", keyID
	}
	if cp.Header.Get("Authorization") != auth {
		return "SignatureDoesNotMatch", keyID
	}
	return "", keyID
}

// writeDenied answers 403 as S3 does: the key id is in its own element,
// not in the message.
func writeDenied(w http.ResponseWriter, code, keyID string) {
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(http.StatusForbidden)
	fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>%s</Code><Message>request refused by the test server</Message><AWSAccessKeyId>%s</AWSAccessKeyId></Error>`, code, keyID)
}

type countingBody struct {
	io.ReadCloser
	n int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n += int64(n)
	return n, err
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

// PutBytes is the body bytes of the PUT requests that stored an object
// (answered 200): the bytes uploaded, as the server counts them.
func (s *Server) PutBytes() int64 { return s.putBytes.Load() }

// Denied is the number of requests refused for their signature or
// credentials.
func (s *Server) Denied() int64 { return s.denied.Load() }

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
