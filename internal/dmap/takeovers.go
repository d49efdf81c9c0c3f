package dmap

import (
	"context"
	"sync"
	"time"

	"github.com/stowage/stowage/backup"
	"github.com/stowage/stowage/cluster"
)

// takeOversAns is a member's answer to mTakeOvers: its last take-overs,
// oldest first.
type takeOversAns struct {
	List []takeOverWire `msgpack:"l"`
}

type takeOverWire struct {
	At         time.Time `msgpack:"at"`
	Source     string    `msgpack:"s"`
	From       string    `msgpack:"f,omitempty"`
	Partitions int       `msgpack:"p"`
	TV         int64     `msgpack:"tv"`
}

// MemberTakeOvers is one member's answer to ClusterTakeOvers.
type MemberTakeOvers struct {
	Member    string
	TakeOvers []backup.TakeOver // oldest first
	Err       error             // the member did not answer in time
}

// takeOversPerMember bounds each member's answer to ClusterTakeOvers.
const takeOversPerMember = time.Second

func (e *Engine) onTakeOvers() takeOversAns {
	var ans takeOversAns
	for _, t := range e.repl.TakeOvers() {
		ans.List = append(ans.List, takeOverWire{At: t.At, Source: t.Source, From: t.From, Partitions: t.Partitions, TV: t.TableVersion})
	}
	return ans
}

// ClusterTakeOvers asks every live member, this one included, for its
// last take-overs, at most takeOversPerMember each, all at once. The
// answers come in the order of the members (oldest first); a member that
// does not answer has Err set.
func (e *Engine) ClusterTakeOvers(ctx context.Context) []MemberTakeOvers {
	ms := e.proto.Members()
	out := make([]MemberTakeOvers, len(ms))
	var wg sync.WaitGroup
	for i, m := range ms {
		out[i].Member = m.ID
		if m.ID == e.proto.Self() {
			out[i].TakeOvers = e.repl.TakeOvers()
			continue
		}
		wg.Go(func() {
			cctx, cancel := context.WithTimeout(ctx, takeOversPerMember)
			defer cancel()
			b, err := e.proto.CallMember(cctx, m.ID, mTakeOvers, struct{}{})
			var ans takeOversAns
			if err == nil {
				err = cluster.Decode(b, &ans)
			}
			if err != nil {
				out[i].Err = err
				return
			}
			for _, t := range ans.List {
				out[i].TakeOvers = append(out[i].TakeOvers, backup.TakeOver{At: t.At, Source: t.Source, From: t.From, Partitions: t.Partitions, TableVersion: t.TV})
			}
		})
	}
	wg.Wait()
	return out
}
