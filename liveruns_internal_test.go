package stowage

import (
	"testing"

	"github.com/stowage/stowage/cluster"
)

// The cached runs follow the view: a member that left is no longer live
// and one that joined is, without a call seeing the old set.
func TestLiveRunsFollowTheView(t *testing.T) {
	a := cluster.Member{ID: "a", Run: "run-a"}
	b := cluster.Member{ID: "b", Run: "run-b"}
	c := cluster.Member{ID: "c", Run: "run-c"}
	v := cluster.NewStaticView(a)
	v.Set(a, b)
	var l liveRuns
	if !l.has(v, "run-b") || l.has(v, "run-c") {
		t.Fatal("run-b not live or run-c live with members a and b")
	}
	v.Set(a, c)
	if l.has(v, "run-b") {
		t.Fatal("run-b still live after b left the view")
	}
	if !l.has(v, "run-c") {
		t.Fatal("run-c not live after c joined the view")
	}
}
