package partition_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/stowage/stowage/partition"
)

var errStopped = errors.New("stopped")

// table builds a table of version v for one partition (id 0) with the
// replica set rs (owner first), owned since since and every replica
// joined at joined.
func table(v, since, joined int64, rs ...string) *partition.Table {
	j := make([]int64, len(rs))
	for i := range j {
		j[i] = joined
	}
	return &partition.Table{Version: v, Owners: [][]string{rs}, Since: []int64{since}, Joined: [][]int64{j}}
}

// calls counts the callbacks a move made.
type calls struct{ drops, releases int }

func (c *calls) drop()    { c.drops++ }
func (c *calls) release() { c.releases++ }

func newReplica(t *testing.T) *partition.Replica {
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	return partition.NewReplica(0, stop, errStopped)
}

// activate takes r from None to Active as owner "a" of table v with
// backups bs, as a take-over does.
func activate(t *testing.T, r *partition.Replica, v int64, epoch uint64, bs ...string) {
	t.Helper()
	var c calls
	mv := r.OnTable(table(v, v, v, append([]string{"a"}, bs...)...), "a", c.drop, c.release)
	if !mv.Acquire {
		t.Fatalf("owner per the table: move %+v, want Acquire", mv)
	}
	if !r.StillAcquiring(mv.Gen) {
		t.Fatal("not acquiring right after the table")
	}
	if !r.Activate(mv.Gen, epoch, bs, func() bool { return true }, c.drop, c.release) {
		t.Fatal("Activate of the running acquisition failed")
	}
	if got := r.State(); got != partition.Active {
		t.Fatalf("state %s after Activate, want active", got)
	}
}

func TestReplicaOwnerAcquiresThenServes(t *testing.T) {
	r := newReplica(t)
	if _, err := r.EnterWrite(t.Context()); !isMoved(err) {
		t.Fatalf("write on a replica holding nothing: %v, want MovedError", err)
	}
	var c calls
	mv := r.OnTable(table(1, 1, 1, "a", "b"), "a", c.drop, c.release)
	if !mv.Acquire || mv.Gen == 0 {
		t.Fatalf("move %+v, want Acquire with a generation", mv)
	}
	if c.releases != 0 {
		t.Fatal("an acquiring replica released its stores")
	}
	// A write waits while the partition is being acquired.
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	if _, err := r.EnterWrite(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("write while acquiring: %v, want to wait until the deadline", err)
	}
	done := make(chan error, 1)
	go func() {
		tk, err := r.EnterWrite(t.Context())
		if err == nil && (tk.Epoch != 7 || !slices.Equal(tk.Backups, []string{"b"})) {
			err = errors.New("ticket of the wrong epoch or backups")
		}
		if err == nil {
			tk.Done()
		}
		done <- err
	}()
	if !r.Activate(mv.Gen, 7, []string{"b"}, func() bool { return true }, c.drop, c.release) {
		t.Fatal("Activate failed")
	}
	if err := <-done; err != nil {
		t.Fatalf("waiting write: %v", err)
	}
	if k, e := r.Status(1, false); k != partition.HoldActive || e != 7 {
		t.Fatalf("status %v epoch %d, want active at 7", k, e)
	}
	if why := r.SafeWhy([]string{"a", "b"}); why != "" {
		t.Fatalf("all backups filled, yet %q", why)
	}
	if why := r.SafeWhy([]string{"a", "b", "c"}); why == "" {
		t.Fatal("a backup missing, yet safe")
	}
}

func TestReplicaOwnershipMovesAway(t *testing.T) {
	r := newReplica(t)
	activate(t, r, 1, 1<<20, "b")
	var c calls
	// The table gives the partition to b: this member holds its data for
	// the new owner, refuses writes and tells its stores once.
	if mv := r.OnTable(table(2, 2, 1, "b", "a"), "a", c.drop, c.release); mv.Acquire || mv.Refill {
		t.Fatalf("move %+v for a partition given away", mv)
	}
	if got := r.State(); got != partition.Held {
		t.Fatalf("state %s, want held", got)
	}
	if c.releases != 1 || c.drops != 0 {
		t.Fatalf("releases %d drops %d, want 1 and 0", c.releases, c.drops)
	}
	if _, err := r.EnterWrite(t.Context()); !isMoved(err) {
		t.Fatalf("write on a held partition: %v, want MovedError", err)
	}
	if !r.Busy() {
		t.Fatal("a held partition nobody took is not busy for a leaving member")
	}
	// The new owner takes it: owner data, handed to b.
	var exported []bool
	if !r.HandOver(t.Context(), "b", 1, false, func(owner bool) { exported = append(exported, owner) }) {
		t.Fatal("held partition not handed over")
	}
	if !slices.Equal(exported, []bool{true}) || r.Busy() {
		t.Fatalf("exported %v, busy %v: want owner data once, not busy", exported, r.Busy())
	}
	// A release of the new owner's epoch leaves a backup in the set.
	r.Release(2<<20, func() bool { return true }, c.drop)
	if got := r.State(); got != partition.Backup || c.drops != 1 {
		t.Fatalf("after release: %s, drops %d; want backup, 1", got, c.drops)
	}
	if k, _ := r.Status(2, false); k != partition.HoldUnsynced {
		t.Fatalf("an unfilled backup reports %v", k)
	}
}

func TestReplicaBackupFillAndApply(t *testing.T) {
	r := newReplica(t)
	var c calls
	r.OnTable(table(3, 3, 3, "o", "a"), "a", c.drop, c.release)
	if got := r.State(); got != partition.Backup {
		t.Fatalf("a replica in the set: %s, want backup", got)
	}
	applied := 0
	apply := func() error { applied++; return nil }
	// Records before a fill are refused: the copy is not whole.
	if err := r.ApplyBackup(0, 3, false, apply); !needFill(err) {
		t.Fatalf("record before a fill: %v, want NeedFill", err)
	}
	// A partial fill needs a whole copy first.
	if err := r.Fill(5, 3, true, func() error { t.Fatal("partial fill installed onto an unfilled backup"); return nil }); !needFill(err) {
		t.Fatalf("partial fill first: %v, want NeedFill", err)
	}
	installed := false
	if err := r.Fill(5, 3, false, func() error { installed = true; return nil }); err != nil || !installed {
		t.Fatalf("full fill: %v, installed %v", err, installed)
	}
	if err := r.ApplyBackup(5, 3, false, apply); err != nil || applied != 1 {
		t.Fatalf("record of the owner's epoch: %v, applied %d", err, applied)
	}
	// A record of another epoch comes from an owner that is not this
	// backup's: stale, not applied.
	var re *partition.RefusedError
	if err := r.ApplyBackup(4, 3, false, apply); !errors.As(err, &re) || re.NeedFill || applied != 1 {
		t.Fatalf("record of an old epoch: %v (applied %d), want a stale refusal", err, applied)
	}
	// A backup that left and joined the set again after its fill may
	// have missed writes: a source only when nothing better is left
	// (stale), and it refuses records until filled again.
	if k, _ := r.Status(9, false); k != partition.HoldStale {
		t.Fatalf("a copy filled before it rejoined reports %v, want stale", k)
	}
	if r.HandOver(t.Context(), "n", 9, false, func(bool) { t.Fatal("a stale copy handed over as whole") }) {
		t.Fatal("a stale copy handed over to a new owner that did not take it as stale")
	}
	if err := r.ApplyBackup(5, 9, false, apply); !needFill(err) {
		t.Fatalf("record onto a copy filled before it rejoined: %v", err)
	}
	// Reverts are applied whatever the copy (they only undo).
	if err := r.ApplyBackup(5, 9, true, apply); err != nil || applied != 2 {
		t.Fatalf("revert: %v, applied %d", err, applied)
	}
	if k, e := r.Status(3, false); k != partition.HoldBackup || e != 5 {
		t.Fatalf("filled backup reports %v at %d", k, e)
	}
}

// A backup whose copy a new owner took (its owner failed, and the new
// owner is another member) takes nothing more of the old owner's epoch:
// a record whose sender passed the owner check under the old table but
// reaches the copy only after the hand-over would be acknowledged to the
// old owner's writer, yet missing from the new owner's data.
func TestReplicaHandedBackupRefusesOldOwner(t *testing.T) {
	r := newReplica(t)
	var c calls
	r.OnTable(table(3, 3, 3, "o", "a"), "a", c.drop, c.release)
	if err := r.Fill(5, 3, false, func() error { return nil }); err != nil {
		t.Fatalf("full fill: %v", err)
	}
	applied := 0
	apply := func() error { applied++; return nil }
	if err := r.ApplyBackup(5, 3, false, apply); err != nil || applied != 1 {
		t.Fatalf("record of the owner's epoch: %v, applied %d", err, applied)
	}
	// "o" failed; the table makes "n" the owner and keeps this backup.
	r.OnTable(table(4, 4, 3, "n", "a"), "a", c.drop, c.release)
	var exported []bool
	if !r.HandOver(t.Context(), "n", 3, false, func(owner bool) { exported = append(exported, owner) }) {
		t.Fatal("a whole backup copy was not handed over")
	}
	if !slices.Equal(exported, []bool{false}) {
		t.Fatalf("exported %v, want the backup copy once", exported)
	}
	var re *partition.RefusedError
	for _, revert := range []bool{false, true} {
		if err := r.ApplyBackup(5, 3, revert, apply); !errors.As(err, &re) || re.NeedFill || applied != 1 {
			t.Fatalf("record (revert %v) of the old owner after the hand-over: %v (applied %d), want a stale refusal", revert, err, applied)
		}
	}
	if err := r.Fill(5, 3, false, func() error { t.Fatal("the old owner's fill installed after the hand-over"); return nil }); !errors.As(err, &re) || re.NeedFill {
		t.Fatalf("fill of the old epoch after the hand-over: %v, want a stale refusal", err)
	}
	// The copy is still a source, should the new owner take it again.
	if k, e := r.Status(3, false); k != partition.HoldBackup || e != 5 {
		t.Fatalf("handed copy reports %v at %d", k, e)
	}
	if !r.HandOver(t.Context(), "n", 3, false, func(bool) {}) {
		t.Fatal("the copy was not handed over again")
	}
	// The new owner fills it with its epoch: its records go in.
	if err := r.Fill(6, 4, false, func() error { return nil }); err != nil {
		t.Fatalf("the new owner's fill: %v", err)
	}
	if err := r.ApplyBackup(6, 3, false, apply); err != nil || applied != 2 {
		t.Fatalf("the new owner's record: %v, applied %d", err, applied)
	}
}

func TestReplicaOwnerRefusesFill(t *testing.T) {
	r := newReplica(t)
	activate(t, r, 1, 1<<20)
	var re *partition.RefusedError
	if err := r.Fill(1, 1, false, func() error { t.Fatal("an owner installed a fill"); return nil }); !errors.As(err, &re) || re.NeedFill {
		t.Fatalf("fill onto an owner: %v, want a stale refusal", err)
	}
}

func TestReplicaAbandonedAcquisition(t *testing.T) {
	r := newReplica(t)
	var c calls
	r.OnTable(table(1, 1, 1, "o", "a"), "a", c.drop, c.release)
	if err := r.Fill(3, 1, false, func() error { return nil }); err != nil {
		t.Fatal(err)
	}
	// Promoted, then given to another member before the take-over ended.
	mv := r.OnTable(table(2, 2, 1, "a"), "a", c.drop, c.release)
	if !mv.Acquire {
		t.Fatal("promotion did not acquire")
	}
	if k, _ := r.Status(1, true); k != partition.HoldBackup {
		t.Fatalf("to its own acquisition a filled backup holds %v", k)
	}
	r.OnTable(table(3, 3, 1, "x", "a"), "a", c.drop, c.release)
	if r.StillAcquiring(mv.Gen) {
		t.Fatal("an abandoned acquisition still runs")
	}
	// Nothing installed: back to the filled backup it was.
	if r.Acquiring(mv.Gen, func() bool { return true }, c.drop, c.release) {
		t.Fatal("abandoned acquisition reported as still running")
	}
	if got := r.State(); got != partition.Backup {
		t.Fatalf("after stepping back: %s, want backup", got)
	}

	// With a copy installed the member holds it for the new owner.
	r2 := newReplica(t)
	mv = r2.OnTable(table(1, 1, 1, "a"), "a", c.drop, c.release)
	r2.OnTable(table(2, 2, 1, "x"), "a", c.drop, c.release)
	if r2.Activate(mv.Gen, 9, nil, func() bool { return false }, c.drop, c.release) {
		t.Fatal("an abandoned acquisition was activated")
	}
	if got, e := r2.State(), r2.Epoch(); got != partition.Held || e != 9 {
		t.Fatalf("after an abandoned take-over with a copy: %s at %d, want held at 9", got, e)
	}
}

func TestReplicaRefillHoldsWrites(t *testing.T) {
	r := newReplica(t)
	activate(t, r, 1, 1<<20, "b")
	var c calls
	// The table adds c: writes to b go on, c must be filled.
	if mv := r.OnTable(table(2, 1, 1, "a", "b", "c"), "a", c.drop, c.release); !mv.Refill {
		t.Fatalf("move %+v, want Refill", mv)
	}
	if !r.NeedsRefill([]string{"a", "b", "c"}) {
		t.Fatal("a missing backup needs no refill")
	}
	tk, err := r.EnterWrite(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	began := make(chan *partition.Refill, 1)
	go func() {
		f, _ := r.BeginRefill(t.Context(), func() (bool, []string) { return true, []string{"b", "c"} }, func(uint64) {})
		began <- f
	}()
	select {
	case <-began:
		t.Fatal("a refill began with a write in flight")
	case <-time.After(20 * time.Millisecond):
	}
	tk.Done()
	f := <-began
	if f == nil || !slices.Equal(f.Old, []string{"b"}) || f.Force {
		t.Fatalf("refill %+v, want old [b], not forced", f)
	}
	// New writes wait for the refill.
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	if _, err := r.EnterWrite(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("write during a refill: %v, want to wait", err)
	}
	// c (an async backup) did not take it: retry after a back-off that
	// grows, writes go on meanwhile.
	if retry := f.End([]string{"b"}, false, false, 10*time.Second); retry != time.Second {
		t.Fatalf("first async retry after %v, want 1s", retry)
	}
	if tk, err := r.EnterWrite(t.Context()); err != nil {
		t.Fatalf("write after the refill: %v", err)
	} else {
		tk.Done()
	}
	f, ok := r.BeginRefill(t.Context(), func() (bool, []string) { return true, []string{"b", "c"} }, func(uint64) {})
	if !ok {
		t.Fatal("second refill did not begin")
	}
	if retry := f.End([]string{"b"}, false, false, 10*time.Second); retry != 2*time.Second {
		t.Fatalf("second async retry after %v, want 2s", retry)
	}
	// Once every backup is filled there is nothing to refill.
	f, ok = r.BeginRefill(t.Context(), func() (bool, []string) { return true, []string{"b", "c"} }, func(uint64) {})
	if !ok {
		t.Fatal("third refill did not begin")
	}
	f.End([]string{"b", "c"}, true, false, 10*time.Second)
	if _, ok := r.BeginRefill(t.Context(), func() (bool, []string) { return true, []string{"b", "c"} }, func(uint64) { t.Fatal("prepared a refill of filled backups") }); ok {
		t.Fatal("refill began with every backup filled")
	}
	// A backup that lost records forces a whole refill.
	r.MarkDirty()
	f, ok = r.BeginRefill(t.Context(), func() (bool, []string) { return true, []string{"b", "c"} }, func(uint64) {})
	if !ok || !f.Force {
		t.Fatalf("refill after MarkDirty: %v, %+v; want a forced refill", ok, f)
	}
	f.End([]string{"b", "c"}, true, false, 10*time.Second)
}

func TestReplicaStopEndsWaits(t *testing.T) {
	stop := make(chan struct{})
	r := partition.NewReplica(0, stop, errStopped)
	var c calls
	r.OnTable(table(1, 1, 1, "a"), "a", c.drop, c.release)
	done := make(chan error, 1)
	go func() { done <- r.EnterRead(context.Background()) }()
	close(stop)
	if err := <-done; !errors.Is(err, errStopped) {
		t.Fatalf("wait on a stopping member: %v, want the stop error", err)
	}
}

func isMoved(err error) bool {
	var m partition.MovedError
	return errors.As(err, &m)
}

func needFill(err error) bool {
	var re *partition.RefusedError
	return errors.As(err, &re) && re.NeedFill
}
