package oss

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"time"

	alioss "github.com/aliyun/aliyun-oss-go-sdk/oss"
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

func (p RetryPolicy) withDefaults() RetryPolicy {
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = 10
	}
	if p.BaseDelay <= 0 {
		p.BaseDelay = 100 * time.Millisecond
	}
	if p.MaxDelay <= 0 {
		p.MaxDelay = 5 * time.Second
	}
	if p.Deadline <= 0 {
		p.Deadline = 2 * time.Minute
	}
	return p
}

// errGaveUp marks the last error of an operation whose retries ran out.
var errGaveUp = errors.New("retries exhausted")

// retry runs op until it succeeds, fails permanently, or the policy's
// attempts or deadline run out. op gets the attempt number (1-based).
func (f *FS) retry(ctx context.Context, what string, op func(ctx context.Context, attempt int) error) error {
	p := f.retryPolicy
	ctx, cancel := context.WithTimeout(ctx, p.Deadline)
	defer cancel()
	var err error
	for attempt := 1; ; attempt++ {
		err = op(ctx, attempt)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%w after %d attempts (%w): %w", errGaveUp, attempt, ctx.Err(), err)
		}
		if !retryable(err) {
			return err
		}
		if attempt >= p.MaxAttempts {
			return fmt.Errorf("%w after %d attempts: %w", errGaveUp, attempt, err)
		}
		d := min(p.MaxDelay, p.BaseDelay<<min(attempt-1, 20))
		d = d/2 + rand.N(d/2+1)
		f.log.Debug("stowage/fsbackend/oss: retrying", slog.String("op", what), slog.Int("attempt", attempt),
			slog.Duration("backoff", d), slog.String("error", err.Error()))
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%w after %d attempts (%w): %w", errGaveUp, attempt, ctx.Err(), err)
		case <-t.C:
		}
	}
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
