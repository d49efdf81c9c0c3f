package cluster

import (
	"log/slog"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"
)

// refusalsLogged is how many refused connections a transport logs one by
// one before it logs at most one line per refusalLogEvery.
const (
	refusalsLogged  = 5
	refusalLogEvery = 10 * time.Second
)

// refusalLog logs the connections a transport refuses (past its limits,
// or that fail to authenticate): the first few each, then one line per
// refusalLogEvery saying how many were refused since the line before, so
// that a peer that keeps dialling cannot fill the log.
type refusalLog struct {
	log      *slog.Logger
	every    rate.Sometimes
	unlogged atomic.Int64 // refusals since the last line
}

func newRefusalLog(log *slog.Logger) *refusalLog {
	return &refusalLog{log: log, every: rate.Sometimes{First: refusalsLogged, Interval: refusalLogEvery}}
}

// warn logs a refusal, or counts it for the next line.
func (r *refusalLog) warn(msg string, args ...any) {
	r.unlogged.Add(1)
	r.every.Do(func() {
		if n := r.unlogged.Swap(0); n > 1 {
			args = append(args, "refused_since_last_line", n)
		}
		r.log.Warn(msg, args...)
	})
}
