package httpapi

import (
	"fmt"
	"strconv"
	"time"
)

// maxTTL bounds a PUT's ?ttl=: far beyond any job history, and far from
// where a deadline in Unix nanoseconds would overflow.
const maxTTL = 100 * 365 * 24 * time.Hour

// parseTTL reads a PUT's ?ttl=: whole seconds ("3600") or a Go duration
// ("90m"); 0 means the entry never expires. Empty means none was given
// (the map's time-to-live-seconds applies).
func parseTTL(s string) (time.Duration, bool, error) {
	if s == "" {
		return 0, false, nil
	}
	var d time.Duration
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		if n < 0 || n > int64(maxTTL/time.Second) {
			return 0, false, fmt.Errorf("ttl %q: want 0..%d seconds", s, int64(maxTTL/time.Second))
		}
		d = time.Duration(n) * time.Second
	} else if d, err = time.ParseDuration(s); err != nil {
		return 0, false, fmt.Errorf("ttl %q: want whole seconds or a duration such as 90s or 24h", s)
	}
	if d < 0 || d > maxTTL {
		return 0, false, fmt.Errorf("ttl %q: want 0 (never expires) up to %v", s, maxTTL)
	}
	return d, true, nil
}
