package cluster

import (
	"io"
	"log"
	"log/slog"
	"testing"
	"time"

	"github.com/hashicorp/memberlist"
)

// memberlist's line about an unacknowledged probe makes the member
// suspect; an acknowledged probe clears it.
func TestSuspectFromProbeLineClearedByAck(t *testing.T) {
	c := &Cluster{self: Member{ID: "a"}, live: map[string]Member{"a": {ID: "a"}, "b": {ID: "b"}}, suspect: map[string]time.Time{}}
	lg := log.New(logWriter{l: slog.New(slog.NewTextHandler(io.Discard, nil)), suspect: c.suspectProbe}, "", 0)
	suspects := func() map[string]bool {
		out := map[string]bool{}
		for _, m := range c.Members() {
			out[m.ID] = m.Suspect
		}
		return out
	}
	lg.Printf("[INFO] memberlist: Suspect %s has failed, no acks received", "b")
	lg.Printf("[INFO] memberlist: Suspect %s has failed, no acks received", "gone") // not a member
	lg.Printf("[DEBUG] memberlist: Failed UDP ping: %s (timeout reached)", "a")
	if got := suspects(); !got["b"] || got["a"] || len(c.suspect) != 1 {
		t.Fatalf("after an unacknowledged probe of b: suspect %v (kept %v), want b only", got, c.suspect)
	}
	(&delegate{c: c}).NotifyPingComplete(&memberlist.Node{Name: "b"}, 0, nil)
	if got := suspects(); got["b"] {
		t.Fatalf("after an acknowledged probe of b: suspect %v, want none", got)
	}
}
