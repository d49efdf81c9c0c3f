package objstore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

// RetryPolicy says how often and how long Retry tries. The zero value is
// not useful; start from DefaultRetryPolicy.
type RetryPolicy struct {
	// MaxAttempts caps the attempts, the first one included; 0 means no
	// cap other than the deadline.
	MaxAttempts int
	// Initial is the backoff before the second attempt; each further
	// backoff is Multiplier times the previous one, capped at Max. Every
	// wait is drawn uniformly from [d/2, d] (jitter), so that many writers
	// throttled together do not come back together.
	Initial    time.Duration
	Max        time.Duration
	Multiplier float64
	// Deadline bounds the whole operation, all attempts and waits, when
	// the caller's context has no earlier deadline. 0 means only the
	// context bounds it.
	Deadline time.Duration
}

// DefaultRetryPolicy returns a fresh policy: up to 10 attempts, 100 ms
// growing by 2 to at most 5 s between attempts (about 20 s of backoff in
// all, enough to ride out S3 throttling of a prefix), within 2 minutes.
func DefaultRetryPolicy() RetryPolicy {
	return RetryPolicy{MaxAttempts: 10, Initial: 100 * time.Millisecond, Max: 5 * time.Second, Multiplier: 2, Deadline: 2 * time.Minute}
}

// Retry calls op until it returns nil, an error for which retryable is
// false, MaxAttempts is reached, or the deadline passes. op gets the
// attempt number, starting at 1, and a context carrying the deadline. The
// error returned is op's last error, as it is when it was not retryable;
// when MaxAttempts ended the retries it is wrapped with the number of
// attempts, and when the deadline or a cancellation ended them it is
// joined with the context's error, so errors.Is works for both. onRetry, if not nil, is called before each wait (for
// counting and logging; it must not block).
func Retry(ctx context.Context, p RetryPolicy, retryable func(error) bool, onRetry func(attempt int, err error), op func(ctx context.Context, attempt int) error) error {
	if p.Deadline > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, p.Deadline)
		defer cancel()
	}
	backoff := p.Initial
	if backoff <= 0 {
		backoff = 100 * time.Millisecond
	}
	for attempt := 1; ; attempt++ {
		err := op(ctx, attempt)
		if err == nil {
			return nil
		}
		if cerr := ctx.Err(); cerr != nil {
			if errors.Is(err, cerr) {
				return err
			}
			return fmt.Errorf("%w (gave up after %d attempts: %w)", err, attempt, cerr)
		}
		if !retryable(err) {
			return err
		}
		if p.MaxAttempts > 0 && attempt >= p.MaxAttempts {
			return fmt.Errorf("%w (gave up after %d attempts)", err, attempt)
		}
		if onRetry != nil {
			onRetry(attempt, err)
		}
		wait := backoff/2 + rand.N(backoff/2+1)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%w (gave up after %d attempts: %w)", err, attempt, ctx.Err())
		case <-t.C:
		}
		next := time.Duration(float64(backoff) * p.Multiplier)
		if p.Multiplier <= 1 {
			next = backoff
		}
		if p.Max > 0 && next > p.Max {
			next = p.Max
		}
		backoff = next
	}
}
