package cluster

import (
	"context"
	"fmt"
	"time"

	"github.com/stowage/stowage/partition"
)

// MethodHandler serves one method of the member protocol: from is the
// caller's transport address, body the request after the header. What it
// returns is the answer; an error reaches the caller as a *RemoteError.
type MethodHandler func(ctx context.Context, from string, body []byte) ([]byte, error)

// Checks are what the dispatcher does with a call's header before its
// handler runs.
type Checks uint8

// CheckTable: a caller whose table is newer than this member's has it
// fetched and installed first, so that the handler decides under the
// newest table either of them knows.
const CheckTable Checks = 1 << iota

type method struct {
	handle MethodHandler
	checks Checks
}

// Register makes the protocol serve a method. Register every method
// before Start; names are unique.
func (pr *Protocol) Register(name string, checks Checks, h MethodHandler) {
	if _, dup := pr.methods[name]; dup {
		panic("stowage/cluster: method " + name + " registered twice")
	}
	pr.methods[name] = method{handle: h, checks: checks}
}

// dispatch is the one entry of every call from another member: it reads
// the header, checks the caller as the method asks, and hands the
// request to the method's handler.
func (pr *Protocol) dispatch(ctx context.Context, from, name string, body []byte) ([]byte, error) {
	m, ok := pr.methods[name]
	if !ok {
		return nil, fmt.Errorf("stowage: unknown method %q", name)
	}
	h, req, err := unframe(body)
	if err != nil {
		return nil, err
	}
	if m.checks&CheckTable != 0 {
		pr.NoteTable(ctx, from, h.tableVersion)
	}
	return m.handle(ctx, from, req)
}

// Methods of the protocol itself.
const (
	mBatch     = "batch"      // several calls in one (batch.go)
	mBatchPoll = "batch-poll" // the answer of a call that outlasted its batch
	mTable     = "table"      // master -> member: install this table
	mGetTab    = "gettab"     // any -> any: send your table
	mLease     = "lease"      // what is your table's version (lease.go)
	mSuspect   = "suspect"    // my connection to this member was refused: check it
)

// tableMsg is a partition table on the wire.
type tableMsg struct {
	Version int64      `msgpack:"v"`
	Owners  [][]string `msgpack:"o"`
	Since   []int64    `msgpack:"s"`
	Joined  [][]int64  `msgpack:"j"`
}

func (tm tableMsg) table() *partition.Table {
	return &partition.Table{Version: tm.Version, Owners: tm.Owners, Since: tm.Since, Joined: tm.Joined}
}

func tableOf(t *partition.Table) tableMsg {
	return tableMsg{Version: t.Version, Owners: t.Owners, Since: t.Since, Joined: t.Joined}
}

// registerOwn registers the protocol's own methods.
func (pr *Protocol) registerOwn() {
	pr.Register(mBatch, 0, func(ctx context.Context, from string, body []byte) ([]byte, error) {
		var req batchReq
		if err := Decode(body, &req); err != nil {
			return nil, err
		}
		if req.Method == mBatch {
			return nil, fmt.Errorf("stowage: a batch inside a batch")
		}
		return Encode(pr.onBatch(ctx, from, &req)), nil
	})
	pr.Register(mBatchPoll, 0, func(ctx context.Context, _ string, body []byte) ([]byte, error) {
		var req pollReq
		if err := Decode(body, &req); err != nil {
			return nil, err
		}
		return Encode(pr.onPoll(ctx, &req)), nil
	})
	pr.Register(mTable, 0, func(ctx context.Context, _ string, body []byte) ([]byte, error) {
		var tm tableMsg
		if err := Decode(body, &tm); err != nil {
			return nil, err
		}
		pr.install(tm.table())
		if t, _ := pr.Table(); t != nil && t.Version > tm.Version {
			return Encode(tableMsg{Version: t.Version}), nil
		}
		return Encode(tableMsg{}), nil
	})
	pr.Register(mGetTab, 0, func(context.Context, string, []byte) ([]byte, error) {
		t, _ := pr.Table()
		if t == nil {
			return Encode(tableMsg{}), nil
		}
		return Encode(tableOf(t)), nil
	})
	pr.Register(mLease, 0, func(_ context.Context, from string, body []byte) ([]byte, error) {
		var req leaseMsg
		if err := Decode(body, &req); err != nil {
			return nil, err
		}
		return Encode(pr.onLease(from, &req)), nil
	})
	pr.Register(mSuspect, 0, func(ctx context.Context, _ string, body []byte) ([]byte, error) {
		// Another member's connection to id was refused: check it here.
		if a := pr.Addr(string(body)); a != "" && string(body) != pr.self {
			cctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
			_, _ = pr.Call(cctx, a, mGetTab, nil)
			cancel()
		}
		return nil, nil
	})
}
