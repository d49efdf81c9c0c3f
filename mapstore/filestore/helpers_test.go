package filestore_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/mapstore"
	"github.com/stowage/stowage/serde/keyhash"
)

// benchModel plays the in-memory map of any partition count: it versions
// writes and is the snapshot source.
type benchModel struct {
	mu   sync.Mutex
	ver  []mapstore.Version
	live []map[string]mapstore.Record
}

func newBenchModel(parts int) *benchModel {
	m := &benchModel{ver: make([]mapstore.Version, parts), live: make([]map[string]mapstore.Record, parts)}
	for p := range m.live {
		m.live[p] = map[string]mapstore.Record{}
		m.ver[p].Epoch = 1
	}
	return m
}

func (m *benchModel) put(key, val []byte) mapstore.Record {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := keyhash.Partition(key, len(m.live))
	m.ver[p].Seq++
	r := mapstore.Record{Partition: p, Version: m.ver[p], Key: key, Value: val}
	m.live[p][string(key)] = r
	return r
}

func (m *benchModel) source(_ context.Context, p int) ([]mapstore.Record, mapstore.Version, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]mapstore.Record, 0, len(m.live[p]))
	for _, r := range m.live[p] {
		out = append(out, r)
	}
	return out, m.ver[p], nil
}

func (m *benchModel) liveBytes() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	var n int64
	for _, l := range m.live {
		for k, r := range l {
			n += int64(len(k) + len(r.Value))
		}
	}
	return n
}

// diskBytes is the size of every file below the root of f.
func diskBytes(tb testing.TB, f fsbackend.FS) int64 {
	tb.Helper()
	list, err := f.List(context.Background(), "")
	if err != nil {
		tb.Fatal(err)
	}
	var n int64
	for _, fi := range list {
		n += fi.Size
	}
	return n
}
