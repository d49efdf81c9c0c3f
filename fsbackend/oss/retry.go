package oss

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"time"

	alioss "github.com/aliyun/aliyun-oss-go-sdk/oss"

	"github.com/stowage/stowage/fsbackend/internal/objstore"
)

// RetryPolicy says how failed requests are retried. The zero value means
// the defaults.
type RetryPolicy struct {
	// MaxAttempts is the number of tries per operation, the first
	// included (default 10, like Hadoop's fs.oss.attempts.maximum).
	MaxAttempts int
	// BaseDelay is the wait after the first failure (default 100ms); it
	// doubles per attempt, with jitter, up to MaxDelay (default 5s).
	BaseDelay, MaxDelay time.Duration
	// Deadline bounds one operation with all its retries (default 2m). The
	// context's deadline, when earlier, wins.
	Deadline time.Duration
}

// policy is the shared retry policy p describes: objstore's defaults (10
// attempts, 100 ms doubling to 5 s, within 2 minutes) where p is zero.
func (p RetryPolicy) policy() objstore.RetryPolicy {
	r := objstore.DefaultRetryPolicy()
	if p.MaxAttempts > 0 {
		r.MaxAttempts = p.MaxAttempts
	}
	if p.BaseDelay > 0 {
		r.Initial = p.BaseDelay
	}
	if p.MaxDelay > 0 {
		r.Max = p.MaxDelay
	}
	if p.Deadline > 0 {
		r.Deadline = p.Deadline
	}
	r.Initial = min(r.Initial, r.Max) // no wait is longer than MaxDelay
	return r
}

// retry runs op until it succeeds, fails permanently, or the policy's
// attempts or deadline run out (objstore.Retry). op gets the attempt
// number (1-based).
func (f *FS) retry(ctx context.Context, what string, op func(ctx context.Context, attempt int) error) error {
	return objstore.Retry(ctx, f.retryPolicy, retryable, func(attempt int, err error) {
		f.log.Debug("stowage/fsbackend/oss: retrying", slog.String("op", what), slog.Int("attempt", attempt),
			slog.String("error", f.redact.scrub(err.Error())))
	}, op)
}

// retryable reports whether err is worth another try: throttling, server
// errors, network trouble and CRC mismatches. Context errors are not.
func retryable(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var se alioss.ServiceError
	if errors.As(err, &se) {
		switch se.Code {
		case "Throttling", "RequestTimeout", "ServiceUnavailable", "InternalError", "SlowDown":
			return true
		}
		return se.StatusCode == 429 || se.StatusCode >= 500
	}
	var ce alioss.CRCCheckError
	if errors.As(err, &ce) {
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return true
	}
	return errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF)
}
