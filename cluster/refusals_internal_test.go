package cluster

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/time/rate"
)

// lineCounter keeps the log lines it is handed, with their attributes.
type lineCounter struct {
	mu    sync.Mutex
	lines []string
}

func (c *lineCounter) Enabled(context.Context, slog.Level) bool { return true }
func (c *lineCounter) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(r.Message)
	r.Attrs(func(a slog.Attr) bool { b.WriteString(" " + a.String()); return true })
	c.mu.Lock()
	c.lines = append(c.lines, b.String())
	c.mu.Unlock()
	return nil
}
func (c *lineCounter) WithAttrs([]slog.Attr) slog.Handler { return c }
func (c *lineCounter) WithGroup(string) slog.Handler      { return c }

// A refusal log writes the first refusals each, then at most one line per
// interval, which says how many were refused since the line before.
func TestRefusalLogBounded(t *testing.T) {
	lc := &lineCounter{}
	r := &refusalLog{log: slog.New(lc), every: rate.Sometimes{First: 2, Interval: 100 * time.Millisecond}}
	for range 10 {
		r.warn("refused", "remote", "127.0.0.1:1")
	}
	time.Sleep(150 * time.Millisecond)
	r.warn("refused", "remote", "127.0.0.1:2")
	lc.mu.Lock()
	defer lc.mu.Unlock()
	want := []string{
		"refused remote=127.0.0.1:1",
		"refused remote=127.0.0.1:1",
		"refused remote=127.0.0.1:2 refused_since_last_line=9",
	}
	if strings.Join(lc.lines, "\n") != strings.Join(want, "\n") {
		t.Fatalf("log lines:\n%s\nwant:\n%s", strings.Join(lc.lines, "\n"), strings.Join(want, "\n"))
	}
}
