package fsbackendtest

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/fsbackend/nslease"
)

// leaseTTL is short so that the suite waits little for expiry, and long
// enough that a renewal (every TTL/4, bounded by that) reaches a slow test
// server on a busy machine in time: at 600 ms a renewal against moto that
// took more than 150 ms let the record expire under its holder.
const leaseTTL = 3 * time.Second

// RunLease checks the namespace lease on a back end: a second cluster is
// refused while the first renews, with an error naming the path and the
// first cluster's members; it takes over once the first stopped renewing
// (its lease expired) or released it; the first cluster's own members and
// a full restart of it are not refused. open returns a handle on the same
// storage each time it is called; dir is a fresh directory on it.
func RunLease(t *testing.T, open func(t *testing.T) fsbackend.FS, dir string) {
	ctx := context.Background()
	opts := func(f fsbackend.FS, members ...string) nslease.Options {
		return nslease.Options{
			FS: f, Dir: dir, Path: "ns/cluster-a", TTL: leaseTTL,
			Members: func() []string { return members },
			Same: func(ms []string) bool {
				for _, m := range ms {
					if slices.Contains(members, m) {
						return true
					}
				}
				return false
			},
		}
	}
	fa, fb := open(t), open(t)

	a, err := nslease.Acquire(ctx, opts(fa, "10.0.0.1:5801", "10.0.0.2:5801"))
	if err != nil {
		t.Fatalf("first cluster: %v", err)
	}
	// A member of the first cluster (it shares an address with the
	// record) is not refused.
	a2, err := nslease.Acquire(ctx, opts(fa, "10.0.0.2:5801"))
	if err != nil {
		t.Fatalf("a member of the holding cluster was refused: %v", err)
	}
	_ = a2.Close(ctx, false)

	_, err = nslease.Acquire(ctx, opts(fb, "10.0.0.9:5801"))
	var held *nslease.HeldError
	if !errors.As(err, &held) || !errors.Is(err, nslease.ErrHeld) {
		t.Fatalf("second cluster while the first renews: got %v, want an *HeldError", err)
	}
	// The record names the members of whichever of the first cluster's
	// members renewed it last (a2 may have, before it closed).
	if msg := err.Error(); !strings.Contains(msg, "ns/cluster-a") || !strings.Contains(msg, "10.0.0.1:5801") && !strings.Contains(msg, "10.0.0.2:5801") {
		t.Fatalf("the error names neither the path nor the holder's members: %s", msg)
	}

	// The first cluster dies without releasing: the second waits for the
	// record to expire and takes over.
	if err := a.Close(ctx, false); err != nil {
		t.Fatal(err)
	}
	b, err := nslease.Acquire(ctx, opts(fb, "10.0.0.9:5801"))
	if err != nil {
		t.Fatalf("second cluster after the first stopped renewing: %v", err)
	}
	// The first cluster, started again, is now the one refused.
	if _, err := nslease.Acquire(ctx, opts(fa, "10.0.0.1:5801")); !errors.Is(err, nslease.ErrHeld) {
		t.Fatalf("first cluster while the second renews: got %v", err)
	}
	// The second releases on a clean stop: the first starts at once.
	if err := b.Close(ctx, true); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	a, err = nslease.Acquire(ctx, opts(fa, "10.0.0.1:5801"))
	if err != nil {
		t.Fatalf("first cluster after the second released: %v", err)
	}
	if waited := time.Since(start); waited > leaseTTL {
		t.Errorf("Acquire after a release waited %v, more than a TTL", waited)
	}
	if err := a.Renew(ctx); err != nil {
		t.Fatalf("renew: %v", err)
	}
	// Renewal keeps only the newest records.
	for i := 0; i < 5; i++ {
		if err := a.Renew(ctx); err != nil {
			t.Fatalf("renew: %v", err)
		}
	}
	list, err := fa.List(ctx, fsbackend.Join(dir, nslease.LeaseDir))
	if err != nil {
		t.Fatal(err)
	}
	if len(list) > 4 {
		t.Errorf("%d lease records left after renewals, want at most 4", len(list))
	}
	_ = a.Close(ctx, true)
}
