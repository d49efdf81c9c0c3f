// Package writeamp measures what the file map store (mapstore/filestore)
// uploads per byte of new data on any fsbackend: new records are written
// through the store in group-commit batches, with compaction running as it
// does under a map (snapshots from memory, superseded files deleted), and
// every byte of every file the store finishes is counted, split into log
// (one new object per batch on an object store) and snapshots.
//
// # What the figure is made of
//
// Per batch, the store writes one log object: a header frame (format,
// partition count, generation, run id: about 50 bytes) and one frame per
// record (a 12-byte frame header, then the key, the version and the value
// with their varint lengths: about 20 bytes per record besides its
// payload). So the log alone costs 1 + 20/(payload per record) + 50/(payload
// per batch) bytes per byte of new data, whatever was written before: no
// object is ever rewritten or appended to.
//
// Snapshots are the rest. A partition is snapshotted, whole, from memory
// once its log since its last snapshot exceeds CompactRatio (0.5) of its
// live bytes (and 64 KiB); its older snapshot and the covered log objects
// are then deleted. With only new keys, a partition of live size L is
// rewritten when it reaches (1+r)·L, after r·L new bytes, which costs
// (1+r)/r = 3 bytes per new byte at r = 0.5; with overwrites of a fixed key
// set it is 1/r = 2. Both bounds hold at any size: the cost per new byte
// does not grow with what was written before, unlike a store that
// re-uploads a whole growing object on every write (SeaTunnel's object
// store writer), whose cost per byte grows with the object. Below 64 KiB
// of log per partition nothing is snapshotted, so a small map pays less.
package writeamp

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/mapstore"
	"github.com/stowage/stowage/mapstore/filestore"
	"github.com/stowage/stowage/partition"
)

// Options say what Run writes. Zero fields take the defaults.
type Options struct {
	// Partitions of the map (default 16).
	Partitions int
	// BatchRecords new records go in each group-commit batch (default 64),
	// with ValueSize-byte values (default 256) and keys of about 16 bytes.
	BatchRecords, ValueSize int
	// The run is measured over Windows windows (default 3) of
	// RoundsPerWindow snapshot rounds each (default 2), after
	// WarmupRounds rounds (default 2, while partitions are small enough
	// for the 64 KiB floor to decide when they are snapshotted). A round
	// ends when every partition was snapshotted once more. Snapshots of a
	// growing map come in rounds whose length grows with the map, so only
	// windows of whole rounds compare like for like: a window that ends
	// just before a round holds none of its snapshot bytes, one that ends
	// just after holds all of them, which is a third of what all earlier
	// rounds wrote.
	Windows, RoundsPerWindow, WarmupRounds int
	// CompactEvery runs the store's Compact after every CompactEvery
	// batches besides its own compaction loop (every 2 s), so that the
	// figure does not depend on how fast the back end is: a snapshot is
	// written as soon as the policy says it is due, the most it ever
	// writes (default 1; negative: only the store's own loop).
	CompactEvery int
}

func (o *Options) defaults() {
	orDefault(&o.Partitions, 16)
	orDefault(&o.BatchRecords, 64)
	orDefault(&o.ValueSize, 256)
	orDefault(&o.Windows, 3)
	orDefault(&o.RoundsPerWindow, 2)
	orDefault(&o.WarmupRounds, 2)
	if o.CompactEvery == 0 {
		o.CompactEvery = 1
	}
}

// orDefault sets *v to d unless it is positive.
func orDefault(v *int, d int) {
	if *v <= 0 {
		*v = d
	}
}

// Window is what one stretch of a run wrote.
type Window struct {
	// Payload is the bytes of keys and values of the new records.
	Payload int64
	// Log and Snapshot are the bytes of the log and snapshot files the
	// store finished (uploaded) meanwhile; Other the rest (META).
	Log, Snapshot, Other int64
	// Files is the number of files finished.
	Files int64
	// Before is the payload written before the window.
	Before int64
}

// Uploaded is every byte finished in the window.
func (w Window) Uploaded() int64 { return w.Log + w.Snapshot + w.Other }

// Ratio is bytes uploaded per byte of new payload.
func (w Window) Ratio() float64 { return float64(w.Uploaded()) / float64(max(1, w.Payload)) }

// LogRatio is log bytes per byte of new payload.
func (w Window) LogRatio() float64 { return float64(w.Log) / float64(max(1, w.Payload)) }

// SnapshotRatio is snapshot bytes per byte of new payload.
func (w Window) SnapshotRatio() float64 { return float64(w.Snapshot) / float64(max(1, w.Payload)) }

func (w Window) String() string {
	return fmt.Sprintf("%.3f bytes uploaded per new byte (log %.3f, snapshots %.3f) over %d KiB of new data after %d KiB, %d files",
		w.Ratio(), w.LogRatio(), w.SnapshotRatio(), w.Payload>>10, w.Before>>10, w.Files)
}

// Result is one run.
type Result struct {
	Options Options
	// Warmup is what was written before the first window, Windows the
	// windows, Total everything (the META file Open writes included).
	Warmup  Window
	Windows []Window
	Total   Window
	// Stored is the bytes the map's files hold at the end (superseded
	// snapshots and covered log files are deleted), Live the payload of
	// the map.
	Stored, Live int64
	Took         time.Duration
}

// Run writes new records through a file map store on f (which must be
// empty: the map's own directory), batch after batch, until the last
// window ends, and measures every window. f stays open. Run takes about
// 1.47^(WarmupRounds+Windows*RoundsPerWindow) times 64 KiB per partition
// of new data (with the defaults, 16 partitions: about 23 MiB, uploading
// about 4 times as much).
func Run(ctx context.Context, f fsbackend.FS, o Options) (Result, error) {
	o.defaults()
	res := Result{Options: o}
	cf := &Counting{FS: f}
	st, err := filestore.Open(ctx, filestore.Options{FS: cf, Partitions: o.Partitions})
	if err != nil {
		return res, err
	}
	defer st.Close()
	m := newModel(o.Partitions)
	st.SetSnapshotSource(m.source)
	// A member loads every partition it owns at start (EAGER), which makes
	// the store their owner: only owned partitions are snapshotted.
	for p := 0; p < o.Partitions; p++ {
		if err := st.ReplayPartition(ctx, p, func(r mapstore.Record) error {
			return fmt.Errorf("stowage/bench/writeamp: the map directory is not empty (partition %d)", p)
		}); err != nil {
			return res, err
		}
	}

	value := make([]byte, o.ValueSize)
	for i := range value {
		value[i] = byte('a' + i%26)
	}
	start := time.Now()
	var payload, windowStart int64
	cutAt := o.WarmupRounds
	base := cf.Counts()
	cut := func() Window {
		c := cf.Counts()
		w := Window{Payload: payload - windowStart, Before: windowStart, Log: c.Log - base.Log, Snapshot: c.Snapshot - base.Snapshot,
			Other: c.Other - base.Other, Files: c.Files - base.Files}
		base, windowStart = c, payload
		return w
	}
	for key, batch := 0, 1; len(res.Windows) < o.Windows; batch++ {
		recs := make([]mapstore.Record, o.BatchRecords)
		for i := range recs {
			k := []byte("job-" + strconv.Itoa(key) + "-state")
			key++
			recs[i] = m.next(k, value)
			payload += int64(len(k) + len(value))
		}
		if err := st.StoreAll(ctx, recs); err != nil {
			return res, err
		}
		m.apply(recs)
		if o.CompactEvery > 0 && batch%o.CompactEvery == 0 {
			if err := st.Compact(ctx); err != nil {
				return res, err
			}
		}
		if cf.Rounds(o.Partitions) < cutAt {
			continue
		}
		if windowStart == 0 {
			res.Warmup = cut()
		} else {
			res.Windows = append(res.Windows, cut())
		}
		cutAt += o.RoundsPerWindow
	}
	res.Took = time.Since(start)
	// Everything the store wrote, the META file Open wrote included.
	c := cf.Counts()
	res.Total = Window{Payload: payload, Log: c.Log, Snapshot: c.Snapshot, Other: c.Other, Files: c.Files}
	res.Live = m.liveBytes()
	list, err := f.List(ctx, "")
	if err != nil {
		return res, err
	}
	for _, fi := range list {
		res.Stored += fi.Size
	}
	return res, nil
}

// model is the in-memory map: it gives records their versions and is the
// snapshot source, as the map of a member is.
type model struct {
	mu    sync.Mutex
	parts int
	live  []map[string]mapstore.Record
	ver   []mapstore.Version
	bytes int64
}

func newModel(parts int) *model {
	m := &model{parts: parts, live: make([]map[string]mapstore.Record, parts), ver: make([]mapstore.Version, parts)}
	for p := range m.live {
		m.live[p] = map[string]mapstore.Record{}
	}
	return m
}

func (m *model) next(k, v []byte) mapstore.Record {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := partition.Of(k, m.parts)
	m.ver[p].Epoch = 1
	m.ver[p].Seq++
	return mapstore.Record{Partition: p, Version: m.ver[p], Key: k, Value: v}
}

func (m *model) apply(rs []mapstore.Record) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, r := range rs {
		if old, ok := m.live[r.Partition][string(r.Key)]; ok {
			m.bytes -= int64(len(old.Key) + len(old.Value))
		}
		m.live[r.Partition][string(r.Key)] = r
		m.bytes += int64(len(r.Key) + len(r.Value))
	}
}

func (m *model) liveBytes() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.bytes
}

func (m *model) source(_ context.Context, p int) ([]mapstore.Record, mapstore.Version, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]mapstore.Record, 0, len(m.live[p]))
	for _, r := range m.live[p] {
		out = append(out, r)
	}
	return out, m.ver[p], nil
}

// Counts are the files a Counting FS saw finished.
type Counts struct {
	Log, Snapshot, Other, Files int64
}

// Counting is an fsbackend.FS that counts the bytes of every file whose
// Close succeeded (on an object store: every object uploaded), by kind:
// log files (<gen>/log/...), snapshots (<gen>/snap/...), the rest. Renames
// count the file's size again, as a copy does on an object store. It is
// safe for concurrent use.
type Counting struct {
	fsbackend.FS
	log, snap, other, files atomic.Int64
	mu                      sync.Mutex
	snaps                   map[int]int // snapshots finished, by partition
}

// Rounds is how many snapshots every one of partitions 0 .. parts-1 has
// had at least.
func (c *Counting) Rounds(parts int) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := -1
	for p := 0; p < parts; p++ {
		if n := c.snaps[p]; r < 0 || n < r {
			r = n
		}
	}
	return max(r, 0)
}

// Counts returns the totals so far.
func (c *Counting) Counts() Counts {
	return Counts{Log: c.log.Load(), Snapshot: c.snap.Load(), Other: c.other.Load(), Files: c.files.Load()}
}

func (c *Counting) add(name string, n int64) {
	// .../log/<run>/<n>.log and .../snap/<partition>/<version>.snap
	parts := strings.Split(name, "/")
	dir := ""
	if len(parts) >= 3 {
		dir = parts[len(parts)-3]
	}
	switch {
	case dir == "log" && strings.HasSuffix(name, ".log"):
		c.log.Add(n)
	case dir == "snap" && strings.HasSuffix(name, ".snap"):
		c.snap.Add(n)
		if p, err := strconv.Atoi(parts[len(parts)-2]); err == nil {
			c.mu.Lock()
			if c.snaps == nil {
				c.snaps = map[int]int{}
			}
			c.snaps[p]++
			c.mu.Unlock()
		}
	default:
		c.other.Add(n)
	}
	c.files.Add(1)
}

// Create implements fsbackend.FS.
func (c *Counting) Create(ctx context.Context, name string) (fsbackend.Writer, error) {
	w, err := c.FS.Create(ctx, name)
	if err != nil {
		return nil, err
	}
	return &countingWriter{Writer: w, c: c, name: name}, nil
}

// Rename implements fsbackend.FS.
func (c *Counting) Rename(ctx context.Context, oldName, newName string) error {
	if c.FS.Capabilities().AtomicRename {
		return c.FS.Rename(ctx, oldName, newName) // no copy: nothing to count
	}
	fi, err := c.FS.Stat(ctx, oldName)
	if err != nil {
		return err
	}
	if err := c.FS.Rename(ctx, oldName, newName); err != nil {
		return err
	}
	c.add(newName, fi.Size)
	return nil
}

type countingWriter struct {
	fsbackend.Writer
	c    *Counting
	name string
	n    int64
}

func (w *countingWriter) Write(p []byte) (int, error) {
	n, err := w.Writer.Write(p)
	w.n += int64(n)
	return n, err
}

func (w *countingWriter) Close() error {
	if err := w.Writer.Close(); err != nil {
		return err
	}
	w.c.add(w.name, w.n)
	return nil
}
