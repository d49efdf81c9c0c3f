package stowage_test

import (
	"testing"
	"time"

	"github.com/stowage/stowage"
	"github.com/stowage/stowage/config"
)

// Node.HistoryJobTTL is history-job-expire-minutes, default one day.
func TestHistoryJobTTL(t *testing.T) {
	n := open(t, stowage.Options{})
	defer n.Close()
	if got := n.HistoryJobTTL(); got != 24*time.Hour {
		t.Fatalf("default HistoryJobTTL = %v, want 24h", got)
	}
	cfg, err := config.Parse([]byte("seatunnel:\n  engine:\n    history-job-expire-minutes: 30\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	m := open(t, stowage.Options{Config: cfg})
	defer m.Close()
	if got := m.HistoryJobTTL(); got != 30*time.Minute {
		t.Fatalf("HistoryJobTTL = %v with history-job-expire-minutes 30, want 30m", got)
	}
}
