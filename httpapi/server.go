package httpapi

import (
	"crypto/tls"
	"log/slog"
	"net/http"
	"time"
)

// Timeouts bound how long a client may hold a connection of the API.
// DefaultTimeouts gives the values stowage node uses.
type Timeouts struct {
	// ReadHeader bounds the request line and headers (slow headers).
	ReadHeader time.Duration
	// Read bounds reading a whole request without a body.
	Read time.Duration
	// BodyBase and BodyRate bound a request with a body: it must arrive
	// within BodyBase plus its length (Content-Length, or the largest
	// value the API accepts when the length is not given) at BodyRate
	// bytes per second, counted from the end of the headers. A body
	// trickled a byte at a time is cut off at that deadline, however
	// much of it has arrived.
	BodyBase time.Duration
	BodyRate int64
	// Write bounds writing the answer, counted from the end of the
	// headers; for a request with a body, from the body's deadline.
	Write time.Duration
	// Idle bounds the wait for the next request on a kept-alive
	// connection.
	Idle time.Duration
	// MaxHeaderBytes bounds the request line and headers.
	MaxHeaderBytes int
}

// DefaultTimeouts are stowage node's: headers within 10 s, a request
// without a body within 30 s, a body within 30 s plus 1 s per 256 KiB
// (a value of the largest size, 64 MiB, gets about 4.8 minutes), the
// answer within 5 minutes, 2 minutes of idleness between requests and
// 64 KiB of headers.
func DefaultTimeouts() Timeouts {
	return Timeouts{
		ReadHeader:     10 * time.Second,
		Read:           30 * time.Second,
		BodyBase:       30 * time.Second,
		BodyRate:       256 << 10,
		Write:          5 * time.Minute,
		Idle:           2 * time.Minute,
		MaxHeaderBytes: 64 << 10,
	}
}

// bodyDeadline is when the body of a request of the given length must
// have arrived.
func (t Timeouts) bodyDeadline(start time.Time, length int64) time.Time {
	if length < 0 || length > maxValue {
		length = maxValue
	}
	d := t.BodyBase
	if t.BodyRate > 0 {
		d += time.Duration(length) * time.Second / time.Duration(t.BodyRate)
	}
	return start.Add(d)
}

// NewServer is the http.Server of the API: handler h with the timeouts t
// and, when tc is not nil, TLS (serve it with ServeTLS(ln, "", "")). A
// request with a body gets its own read and write deadlines (Timeouts),
// set through http.ResponseController before the handler runs.
//
// It speaks HTTP/1.1 and HTTP/2: over TLS, HTTP/2 is chosen by ALPN; in
// clear text a client that knows the server speaks it may open an HTTP/2
// connection directly (h2c "prior knowledge", no Upgrade), so that many
// requests are in flight on one connection. HTTP/2 keeps the same
// deadlines per request (stream) and at most maxStreams requests in
// flight per connection.
func NewServer(h http.Handler, tc *tls.Config, t Timeouts, log *slog.Logger) *http.Server {
	inner := h
	h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength != 0 {
			end := t.bodyDeadline(time.Now(), r.ContentLength)
			rc := http.NewResponseController(w)
			_ = rc.SetReadDeadline(end)
			_ = rc.SetWriteDeadline(end.Add(t.Write))
		}
		inner.ServeHTTP(w, r)
	})
	srv := &http.Server{
		Handler:           h,
		TLSConfig:         tc,
		ReadHeaderTimeout: t.ReadHeader,
		ReadTimeout:       t.Read,
		WriteTimeout:      t.Write,
		IdleTimeout:       t.Idle,
		MaxHeaderBytes:    t.MaxHeaderBytes,
	}
	srv.Protocols = new(http.Protocols)
	srv.Protocols.SetHTTP1(true)
	srv.Protocols.SetHTTP2(true)
	srv.Protocols.SetUnencryptedHTTP2(true)
	srv.HTTP2 = &http.HTTP2Config{MaxConcurrentStreams: maxStreams, MaxReadFrameSize: 1 << 20}
	if log != nil {
		srv.ErrorLog = slog.NewLogLogger(log.Handler(), slog.LevelDebug)
	}
	return srv
}

// maxStreams bounds the requests in flight on one HTTP/2 connection.
const maxStreams = 256
