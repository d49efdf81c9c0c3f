package ossserver

import (
	"crypto/md5"
	"encoding/base64"
	"encoding/xml"
	"fmt"
	"hash/crc64"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stowage/stowage/internal/latency"
)

// Credential is one access key the server accepts.
type Credential struct {
	AccessKeyID     string
	AccessKeySecret string
	// SecurityToken, when set, must be sent as x-oss-security-token
	// (temporary STS credentials).
	SecurityToken string
}

// Options configure a Server.
type Options struct {
	// Credentials the server accepts; at least one is needed.
	Credentials []Credential
	// Buckets that exist from the start.
	Buckets []string
	// Latency, if set, delays every request (see Server.Latency).
	Latency time.Duration
}

// Stats are counters of what the server received.
type Stats struct {
	Requests      int64 // every request, faults included
	Faults        int64 // requests answered by FailNext
	PutRequests   int64 // PutObject and AppendObject requests that stored data
	BytesStored   int64 // object data bytes stored by those requests
	CopyRequests  int64 // CopyObject requests that succeeded
	AuthFailures  int64 // requests refused for their credentials or signature
	DeleteObjects int64 // objects removed by DeleteObject or DeleteMultipleObjects
}

type object struct {
	data       []byte
	modTime    time.Time
	etag       string
	appendable bool
	crc        uint64
	ctype      string
}

// Server is an OSS-protocol server on 127.0.0.1. It is safe for concurrent
// use.
type Server struct {
	ts    *httptest.Server
	creds map[string]Credential
	lat   *latency.Model

	mu      sync.Mutex
	buckets map[string]map[string]*object
	faults  int // requests still to fail; < 0 fails until Heal
	faultSt int

	requests, faulted, puts, stored, copies, authFail, deletes atomic.Int64
	reqID                                                      atomic.Int64
}

var crcTable = crc64.MakeTable(crc64.ECMA)

// New starts a server. Close it when done.
func New(opts Options) *Server {
	s := &Server{creds: map[string]Credential{}, buckets: map[string]map[string]*object{}, lat: latency.New(opts.Latency)}
	for _, c := range opts.Credentials {
		s.creds[c.AccessKeyID] = c
	}
	for _, b := range opts.Buckets {
		s.buckets[b] = map[string]*object{}
	}
	s.ts = httptest.NewServer(s.lat.Handler(http.HandlerFunc(s.serve)))
	return s
}

// Latency is the server's latency model: the delay of every request
// (Options.Latency, changeable) and the requests in flight at once, by
// kind.
func (s *Server) Latency() *latency.Model { return s.lat }

// Endpoint is the server's URL (http://127.0.0.1:port), for oss.New or
// fs.oss.endpoint.
func (s *Server) Endpoint() string { return s.ts.URL }

// Close stops the server and closes every client connection.
func (s *Server) Close() { s.ts.Close() }

// CreateBucket adds an empty bucket (no-op if it exists).
func (s *Server) CreateBucket(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.buckets[name] == nil {
		s.buckets[name] = map[string]*object{}
	}
}

// FailNext makes the next n requests answer status (503 if 0) with code
// ServiceUnavailable. n < 0 fails every request until Heal.
func (s *Server) FailNext(n, status int) {
	if status == 0 {
		status = http.StatusServiceUnavailable
	}
	s.mu.Lock()
	s.faults, s.faultSt = n, status
	s.mu.Unlock()
}

// Heal cancels FailNext.
func (s *Server) Heal() { s.FailNext(0, 0) }

// Stats returns the counters so far.
func (s *Server) Stats() Stats {
	return Stats{
		Requests: s.requests.Load(), Faults: s.faulted.Load(), PutRequests: s.puts.Load(),
		BytesStored: s.stored.Load(), CopyRequests: s.copies.Load(), AuthFailures: s.authFail.Load(),
		DeleteObjects: s.deletes.Load(),
	}
}

// Object returns a copy of an object's data.
func (s *Server) Object(bucket, key string) ([]byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o := s.buckets[bucket][key]
	if o == nil {
		return nil, false
	}
	return append([]byte(nil), o.data...), true
}

// PutRaw stores an object directly, without a request (for fixtures).
func (s *Server) PutRaw(bucket, key string, data []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.buckets[bucket] == nil {
		s.buckets[bucket] = map[string]*object{}
	}
	s.buckets[bucket][key] = newObject(append([]byte(nil), data...), false, "")
}

// Keys lists the keys of a bucket, sorted.
func (s *Server) Keys(bucket string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for k := range s.buckets[bucket] {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func newObject(data []byte, appendable bool, ctype string) *object {
	sum := md5.Sum(data)
	return &object{
		data: data, modTime: time.Now().UTC(), appendable: appendable, ctype: ctype,
		etag: fmt.Sprintf("\"%X\"", sum[:]), crc: crc64.Checksum(data, crcTable),
	}
}

// takeFault reports whether this request must fail, and with what status.
func (s *Server) takeFault() (int, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.faults < 0:
		return s.faultSt, true
	case s.faults > 0:
		s.faults--
		return s.faultSt, true
	}
	return 0, false
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.requests.Add(1)
	id := fmt.Sprintf("%016X", s.reqID.Add(1))
	w.Header().Set("x-oss-request-id", id)
	w.Header().Set("Server", "AliyunOSS")
	if st, ok := s.takeFault(); ok {
		s.faulted.Add(1)
		s.fail(w, r, st, "ServiceUnavailable", "injected fault: service unavailable")
		return
	}
	bucket, key := splitPath(r.URL.Path)
	if err := s.authenticate(r, bucket, key); err != nil {
		s.authFail.Add(1)
		s.fail(w, r, http.StatusForbidden, err.code, err.msg)
		return
	}
	if bucket == "" {
		s.fail(w, r, http.StatusBadRequest, "InvalidBucketName", "bucket name is required (path style /bucket/object)")
		return
	}
	q := r.URL.Query()
	switch {
	case key == "" && r.Method == http.MethodGet:
		s.listV2(w, r, bucket)
	case key == "" && r.Method == http.MethodPost && q.Has("delete"):
		s.deleteMultiple(w, r, bucket)
	case key == "":
		s.fail(w, r, http.StatusNotImplemented, "NotImplemented", "bucket operation not implemented by the test server")
	case r.Method == http.MethodPut && r.Header.Get("x-oss-copy-source") != "":
		s.copyObject(w, r, bucket, key)
	case r.Method == http.MethodPut:
		s.putObject(w, r, bucket, key)
	case r.Method == http.MethodPost && q.Has("append"):
		s.appendObject(w, r, bucket, key)
	case r.Method == http.MethodGet:
		s.getObject(w, r, bucket, key, false)
	case r.Method == http.MethodHead:
		s.getObject(w, r, bucket, key, true)
	case r.Method == http.MethodDelete:
		s.deleteObject(w, r, bucket, key)
	default:
		s.fail(w, r, http.StatusNotImplemented, "NotImplemented", "object operation not implemented by the test server")
	}
}

// splitPath cuts a decoded path-style URL path into bucket and key.
func splitPath(p string) (bucket, key string) {
	p = strings.TrimPrefix(p, "/")
	bucket, key, _ = strings.Cut(p, "/")
	return bucket, key
}

type ossError struct {
	XMLName   xml.Name `xml:"Error"`
	Code      string   `xml:"Code"`
	Message   string   `xml:"Message"`
	RequestID string   `xml:"RequestId"`
	HostID    string   `xml:"HostId"`
}

// fail writes an OSS error document (for HEAD, base64 in x-oss-err).
func (s *Server) fail(w http.ResponseWriter, r *http.Request, status int, code, msg string) {
	body, _ := xml.Marshal(ossError{Code: code, Message: msg, RequestID: w.Header().Get("x-oss-request-id"), HostID: r.Host})
	body = append([]byte(xml.Header), body...)
	w.Header().Set("x-oss-ec", code)
	if r.Method == http.MethodHead {
		w.Header().Set("x-oss-err", base64.StdEncoding.EncodeToString(body))
		w.WriteHeader(status)
		return
	}
	w.Header().Set("Content-Type", "application/xml")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func writeXML(w http.ResponseWriter, v any) {
	body, err := xml.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	body = append([]byte(xml.Header), body...)
	w.Header().Set("Content-Type", "application/xml")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}
