package cluster

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
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
	parts  func(body []byte) ([]int, error) // RegisterReplicated
}

// Register makes the protocol serve a method. Register every method
// before Start; names are unique.
func (pr *Protocol) Register(name string, checks Checks, h MethodHandler) {
	if _, dup := pr.methods[name]; dup {
		panic("stowage/cluster: method " + name + " registered twice")
	}
	pr.methods[name] = method{handle: h, checks: checks}
}

// RegisterReplicated registers a method served only to a replica of the
// partitions the request names: parts reads them from the request. A
// caller that the current table does not name in the replica set of
// each of them is refused before the handler runs.
func (pr *Protocol) RegisterReplicated(name string, checks Checks, parts func(body []byte) ([]int, error), h MethodHandler) {
	pr.Register(name, checks, h)
	m := pr.methods[name]
	m.parts = parts
	pr.methods[name] = m
}

// secure reports whether the transport authenticates its callers.
func (pr *Protocol) secure() bool {
	s, ok := pr.tr.(interface{ Secure() bool })
	return ok && s.Secure()
}

// callerID is the member id of the caller at transport address from, ""
// when no member of the view has that address.
func (pr *Protocol) callerID(from string) string {
	if id := pr.IDOf(from); id != "" && pr.IsLive(id) {
		return id
	}
	// The member started last at the address: an older one there is a
	// process gone (newestAt).
	var found *Member
	for _, m := range pr.view.Members() {
		if m.RPC == from && (found == nil || m.Started.After(found.Started)) {
			found = &m
		}
	}
	if found == nil {
		return ""
	}
	pr.mu.Lock()
	pr.addrs[found.ID] = found.RPC
	pr.mu.Unlock()
	return found.ID
}

// isMaster reports whether member id is the master of this member's
// view: the oldest member, or the oldest of those whose transport
// answers.
func (pr *Protocol) isMaster(id string) bool {
	if ms := pr.ranked(pr.view.Members()); len(ms) > 0 && ms[0].ID == id {
		return true
	}
	ms := pr.Members()
	return len(ms) > 0 && ms[0].ID == id
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
	// With an authenticating transport, from is the caller proven by its
	// connection: only the members of this member's view are served.
	id := ""
	if pr.secure() {
		if id = pr.callerID(from); id == "" {
			pr.log.Warn("stowage: call refused: the caller is not a member", "method", name, "from", from)
			return nil, ErrNotMember
		}
	}
	if m.checks&CheckTable != 0 {
		pr.NoteTable(ctx, from, h.tableVersion)
	}
	if m.parts != nil {
		if err := pr.checkReplica(from, id, name, m.parts, req); err != nil {
			return nil, err
		}
	}
	return m.handle(ctx, from, req)
}

// checkReplica refuses a caller that is not in the replica set of every
// partition the request names, in this member's current table.
func (pr *Protocol) checkReplica(from, id, name string, parts func([]byte) ([]int, error), req []byte) error {
	ps, err := parts(req)
	if err != nil {
		return err
	}
	if id == "" {
		id = pr.callerID(from)
	}
	t, _ := pr.Table()
	for _, p := range ps {
		if p < 0 || p >= pr.count {
			return fmt.Errorf("%w: partition %d out of range", ErrBadMessage, p)
		}
		if t == nil || id == "" || !slices.Contains(t.Owners[p], id) {
			return fmt.Errorf("%w: %s of partition %d from %s, which the table does not name as its replica", ErrNotReplica, name, p, from)
		}
	}
	return nil
}

// Errors of the dispatcher's checks.
var (
	ErrNotMaster  = errors.New("stowage/cluster: the caller is not the master")
	ErrNotReplica = errors.New("stowage/cluster: the caller is not a replica of the partition")
)

// MaxTableVersion is the highest table version a member installs: far
// more versions than a cluster makes, and far enough from the top of
// int64 that the next version cannot overflow.
const MaxTableVersion = math.MaxInt64 / 2

// Methods of the protocol itself.
const (
	mBatch     = "batch"      // several calls in one (batch.go)
	mBatchPoll = "batch-poll" // the answer of a call that outlasted its batch
	mTable     = "table"      // master -> member: install this table (or, version only: which is yours?)
	mGetTab    = "gettab"     // any -> any: send your table
	mLease     = "lease"      // what is your table's version (lease.go)
	mSuspect   = "suspect"    // my connection to this member was refused: check it
)

// getTabReq asks for a member's table (gettab). With Above set, a table
// of that version or older is answered with its version only: a master
// collecting the members' tables on every join decoded a whole table
// from each member, though only those newer than its own are of use.
// A member that sends no request gets the whole table.
type getTabReq struct {
	Above int64 `msgpack:"a,omitempty"`
}

// tableMsg is a partition table on the wire.
type tableMsg struct {
	Version int64      `msgpack:"v"`
	Owners  [][]string `msgpack:"o"`
	Since   []int64    `msgpack:"s"`
	Joined  [][]int64  `msgpack:"j"`
	Order   []string   `msgpack:"r,omitempty"`
	Away    [][]string `msgpack:"a,omitempty"`
	AwayOwn []string   `msgpack:"ao,omitempty"`
	// Departed is partition.Table.Departed; a table from a member that
	// predates it has none.
	Departed map[string]departedMsg `msgpack:"d,omitempty"`
	// ID is the answering member's id, in answers to gettab only: a
	// caller that asks a member's address learns which process answered
	// (answeredAs). A member that predates it names nobody.
	ID string `msgpack:"i,omitempty"`
}

// departedMsg is a partition.Departed on the wire.
type departedMsg struct {
	Since int64  `msgpack:"s"`
	Addr  string `msgpack:"a,omitempty"`
}

func (tm tableMsg) table() *partition.Table {
	t := &partition.Table{Version: tm.Version, Owners: tm.Owners, Since: tm.Since, Joined: tm.Joined, Order: tm.Order, Away: tm.Away, AwayOwner: tm.AwayOwn}
	if len(tm.Departed) > 0 {
		t.Departed = make(map[string]partition.Departed, len(tm.Departed))
		for id, d := range tm.Departed {
			t.Departed[id] = partition.Departed(d)
		}
	}
	return t
}

func tableOf(t *partition.Table) tableMsg {
	tm := tableMsg{Version: t.Version, Owners: t.Owners, Since: t.Since, Joined: t.Joined, Order: t.Order, Away: t.Away, AwayOwn: t.AwayOwner}
	if len(t.Departed) > 0 {
		tm.Departed = make(map[string]departedMsg, len(t.Departed))
		for id, d := range t.Departed {
			tm.Departed[id] = departedMsg(d)
		}
	}
	return tm
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
	pr.Register(mTable, 0, func(ctx context.Context, from string, body []byte) ([]byte, error) {
		var tm tableMsg
		if err := Decode(body, &tm); err != nil {
			return nil, err
		}
		// Tables are pushed by the master alone.
		if id := pr.callerID(from); id == "" || !pr.isMaster(id) {
			return nil, fmt.Errorf("%w: a table from %s, which is not the master here", ErrNotMaster, from)
		}
		if tm.Version > MaxTableVersion {
			return nil, fmt.Errorf("%w: table version %d is over %d", ErrBadMessage, tm.Version, int64(MaxTableVersion))
		}
		if len(tm.Owners) == 0 {
			// A reminder of the version (Protocol.remind): this
			// member's own version tells the master whether to send
			// the whole table.
			return Encode(tableMsg{Version: pr.TableVersion()}), nil
		}
		pr.install(tm.table())
		if t, _ := pr.Table(); t != nil && t.Version > tm.Version {
			return Encode(tableMsg{Version: t.Version}), nil
		}
		return Encode(tableMsg{}), nil
	})
	pr.Register(mGetTab, 0, func(_ context.Context, _ string, body []byte) ([]byte, error) {
		var req getTabReq
		if len(body) > 0 {
			if err := Decode(body, &req); err != nil {
				return nil, err
			}
		}
		t, _ := pr.Table()
		if t == nil {
			return Encode(tableMsg{ID: pr.self}), nil
		}
		if t.Version <= req.Above {
			return Encode(tableMsg{Version: t.Version, ID: pr.self}), nil // no newer table: its version only
		}
		tm := tableOf(t)
		tm.ID = pr.self
		return Encode(tm), nil
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
		// A refused connection takes id as gone (callFramed), and so
		// does another member answering at its address.
		id := string(body)
		if a := pr.Addr(id); a != "" && id != pr.self {
			cctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
			b, err := pr.Call(cctx, a, mGetTab, Encode(getTabReq{Above: MaxTableVersion}))
			cancel()
			if err == nil {
				if _, other := pr.answeredAs(id, a, b); other != "" {
					pr.noteReplaced(id, other)
				}
			}
		}
		return nil, nil
	})
}
