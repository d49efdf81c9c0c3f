package filestore

import (
	"context"
	"fmt"
	"sort"
	"unsafe"

	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/mapstore"
	"github.com/stowage/stowage/serde/keyhash"
)

// scan lists the current generation, reads every log file once (in
// parallel) and keeps each partition's records until its load takes them.
// It also learns which log files each partition's records are in.
func (s *Store) scan(ctx context.Context) error {
	list, err := s.fs.List(ctx, genDir(s.gen))
	if err != nil {
		return fmt.Errorf("stowage/mapstore/filestore: list %s: %w", genDir(s.gen), err)
	}
	s.stale = make([]bool, s.parts)
	s.owned = make([]bool, s.parts)
	s.acquired = make([]bool, s.parts)
	s.ownGen = make([]uint64, s.parts)
	s.files = map[string]*logFile{}
	s.snaps = make([][]snapFile, s.parts)
	s.last = make([]mapstore.Version, s.parts)
	s.since = make([]int64, s.parts)
	s.liveBytes = make([]int64, s.parts)
	var logs []fsbackend.FileInfo
	for _, fi := range list {
		_, kind, ok := parseName(fi.Name)
		switch {
		case !ok:
			continue
		case kind == kindLog:
			logs = append(logs, fi)
		case kind == kindSnap:
			p, v, ok := parseSnapName(fi.Name)
			if !ok || p >= s.parts {
				continue
			}
			s.snaps[p] = append(s.snaps[p], snapFile{name: fi.Name, upto: v, bytes: fi.Size})
		}
	}
	for p := range s.snaps {
		sort.Slice(s.snaps[p], func(i, j int) bool { return s.snaps[p][i].upto.Less(s.snaps[p][j].upto) })
		if n := len(s.snaps[p]); n > 0 {
			s.last[p] = s.snaps[p][n-1].upto
			s.liveBytes[p] = s.snaps[p][n-1].bytes
		}
	}
	upto := make([]mapstore.Version, s.parts)
	for p, sn := range s.snaps {
		if n := len(sn); n > 0 {
			upto[p] = sn[n-1].upto
		}
	}
	reads := make([]logRead, len(logs))
	if err := s.readAll(ctx, s.logJobs(ctx, logs, reads, nil, upto)); err != nil {
		return err
	}
	s.pending = gather(reads, s.parts, nil)
	for p, f := range s.pending {
		v, ok := f.maxVer()
		if ok && s.last[p].Less(v) {
			s.last[p] = v
		}
		s.since[p] += f.bytesAbove(upto[p])
	}
	var read int64
	for i, res := range reads {
		read += max(0, res.size)
		lf := s.foundFile(logs[i].Name, logs[i].Size)
		s.files[lf.name] = lf
		if lf.counted {
			s.logTotal += lf.size
		}
		for _, p := range res.outside {
			s.damage(Damage{File: lf.name, Reason: fmt.Sprintf("record for partition %d of %d", p, s.parts)})
		}
		lf.maxVer, lf.unfinished = res.maxVer, res.unfinished && !lf.own
	}
	collectAfterRead(read)
	return nil
}

// foundFile describes a log file found on storage. Another run's file
// counts as complete and collectable at once only when no other run can be
// live (IsLive unset); otherwise liveness and refresh decide.
func (s *Store) foundFile(name string, size int64) *logFile {
	run := runOf(name)
	mine := run == s.run || !s.shared()
	return &logFile{name: name, run: run, size: size, maxVer: map[int]mapstore.Version{}, own: run == s.run, final: mine, counted: mine}
}

// writtenNow reports whether another live run may be writing the named
// log file: its tail may be a batch not finished yet.
func (s *Store) writtenNow(name string) bool {
	run := runOf(name)
	return s.shared() && run != s.run && s.opts.IsLive(run)
}

type liveEntry struct {
	key     []byte
	ver     mapstore.Version
	value   []byte
	exp     int64
	deleted bool
}

// newestSnapshot returns the bytes (for snapshotEntries), entry count and
// version of a partition's newest snapshot that decodes completely,
// falling back to older ones. pre, if not nil, is a snapshot read ahead.
func (s *Store) newestSnapshot(ctx context.Context, p int, snaps []snapFile, pre *snapRead) ([]byte, int, mapstore.Version) {
	for i := len(snaps) - 1; i >= 0; i-- {
		var buf []byte
		var n int
		var err error
		if pre != nil && pre.name == snaps[i].name {
			buf, n, err = pre.buf, pre.n, pre.err
		} else {
			buf, n, err = s.readSnapshot(ctx, snaps[i].name, p)
		}
		if err != nil {
			s.damage(Damage{File: snaps[i].name, Reason: "snapshot unusable, falling back: " + err.Error()})
			continue
		}
		return buf, n, snaps[i].upto
	}
	return nil, 0, mapstore.Version{}
}

// build merges a partition's newest readable snapshot and its log records
// into the live entries, ordering by version only.
func (s *Store) build(ctx context.Context, p int, f found, snaps []snapFile, pre *snapRead) (map[string]*liveEntry, error) {
	snap, entries, upto := s.newestSnapshot(ctx, p, snaps, pre)
	n := entries + f.count()
	live := make(map[string]*liveEntry, n)
	slab := make([]liveEntry, 0, n)
	_ = snapshotEntries(snap, func(key, value []byte, v mapstore.Version, exp int64) error {
		slab = append(slab, liveEntry{key: key, ver: v, value: value, exp: exp})
		live[string(key)] = &slab[len(slab)-1]
		return nil
	})
	err := f.replay(upto, func(e *logEntry) error {
		cur := live[string(e.key)]
		if cur != nil && !cur.ver.Less(e.ver) {
			return nil
		}
		if cur == nil {
			slab = append(slab, liveEntry{key: e.key})
			cur = &slab[len(slab)-1]
			live[string(e.key)] = cur
		}
		cur.ver, cur.value, cur.exp, cur.deleted = e.ver, e.value, e.exp, e.typ == typeDelete
		return nil
	})
	return live, err
}

// input is what recovery of one partition reads.
type input struct {
	recs   found
	snaps  []snapFile
	pre    *snapRead // the newest snapshot, read ahead (nil: not read)
	fresh  bool      // the partition is not owned yet: loading makes it owned
	reread bool      // read from storage now, not what Open scanned
	gen    uint64    // ownership generation when the read began
}

// partitionInput returns what recovery of partition p reads: the records
// Open scanned (the first time) or a fresh read of storage.
func (s *Store) partitionInput(ctx context.Context, p int) (in input, err error) {
	if p < 0 || p >= s.parts {
		return in, fmt.Errorf("stowage/mapstore/filestore: partition %d out of range [0, %d)", p, s.parts)
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return in, mapstore.ErrClosed
	}
	in.fresh, in.gen = !s.owned[p], s.ownGen[p]
	// What Open scanned is complete only if nothing was written since
	// and the partition was not released.
	in.reread = !in.fresh || s.stale[p]
	var wait *preSnap
	if !in.reread {
		in.recs = s.pending[p]
		in.pre, wait = s.takePre(p)
	}
	in.snaps = append([]snapFile(nil), s.snaps[p]...)
	s.mu.Unlock()
	if wait != nil {
		select {
		case <-wait.done:
			in.pre = wait.read
		case <-ctx.Done():
			return in, ctx.Err()
		}
	}
	if in.reread {
		in.recs, in.snaps, in.pre, err = s.rereadPart(ctx, p)
	}
	return in, err
}

// PendingCount returns how many log records Open found for partition p
// that are not loaded yet: a size hint for the caller's map.
func (s *Store) PendingCount(p int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p < 0 || p >= s.parts {
		return 0
	}
	return s.pending[p].count()
}

// markLoaded makes a partition loaded for the first time owned, unless it
// was released or acquired while it loaded. What a fresh read of storage
// found replaces what was known of it: other members may have written it
// since Open.
func (s *Store) markLoaded(p int, in input) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ownGen[p] != in.gen {
		return
	}
	s.pending[p], s.owned[p] = nil, true
	if !in.reread {
		return
	}
	s.snaps[p] = in.snaps
	var upto mapstore.Version
	if n := len(in.snaps); n > 0 {
		upto = in.snaps[n-1].upto
		s.liveBytes[p] = in.snaps[n-1].bytes
	}
	if s.last[p].Less(upto) {
		s.last[p] = upto
	}
	if v, ok := in.recs.maxVer(); ok && s.last[p].Less(v) {
		s.last[p] = v
	}
	s.since[p] = in.recs.bytesAbove(upto)
	// Records of p in other runs' files wait for this store's snapshot of
	// p: take it soon, as after Acquire.
	if s.shared() && s.since[p] > 0 {
		s.acquired[p] = true
	}
}

// ReplayPartition is the fast path of loading: it calls fn with the
// entries of partition p's newest readable snapshot, then with every log
// record recovery applies, deletes included (Deleted set), in version
// order. The caller keeps, per key, the record of the highest version;
// a delete removes the key. It needs one map (the caller's) where
// LoadPartition needs two.
func (s *Store) ReplayPartition(ctx context.Context, p int, fn func(mapstore.Record) error) error {
	s.loads.Add(1)
	defer s.loadEnded()
	in, err := s.partitionInput(ctx, p)
	if err != nil {
		return err
	}
	snap, _, upto := s.newestSnapshot(ctx, p, in.snaps, in.pre)
	err = snapshotEntries(snap, func(key, value []byte, v mapstore.Version, exp int64) error {
		return fn(mapstore.Record{Partition: p, Version: v, Key: key, Value: value, Expires: exp})
	})
	if err != nil {
		return err
	}
	err = in.recs.replay(upto, func(e *logEntry) error {
		return fn(mapstore.Record{Partition: p, Version: e.ver, Key: e.key, Value: e.value, Deleted: e.typ == typeDelete, Expires: e.exp})
	})
	if err != nil {
		return err
	}
	if in.fresh {
		s.markLoaded(p, in)
	}
	return nil
}

// ReplayPartitionKeys is ReplayPartition for a caller that keeps entries
// in a map keyed by strings, the fastest way to load: size is called
// first with an upper bound of the records to come (to make the map),
// and fn gets each record's key also as a string that shares the
// record's bytes, so the map can keep it without a copy (those bytes are
// never changed; the string keeps them alive). The snapshot's entries
// (each key once) come first, then the log records in version order, none
// twice, so each key's records come in increasing versions: applying each
// in turn — a put sets the key, a delete removes it — leaves per key the
// record of the highest version, without looking the key up first.
func (s *Store) ReplayPartitionKeys(ctx context.Context, p int, size func(n int), fn func(key string, r mapstore.Record) error) error {
	s.loads.Add(1)
	defer s.loadEnded()
	in, err := s.partitionInput(ctx, p)
	if err != nil {
		return err
	}
	snap, entries, upto := s.newestSnapshot(ctx, p, in.snaps, in.pre)
	if size != nil {
		size(entries + in.recs.count())
	}
	err = snapshotEntries(snap, func(key, value []byte, v mapstore.Version, exp int64) error {
		return fn(keyString(key), mapstore.Record{Partition: p, Version: v, Key: key, Value: value, Expires: exp})
	})
	if err != nil {
		return err
	}
	var prev logEntry
	err = in.recs.replay(upto, func(e *logEntry) error {
		if e.ver == prev.ver && prev.key != nil && string(e.key) == string(prev.key) {
			return nil // the same write twice: the first one counts
		}
		prev = *e
		return fn(keyString(e.key), mapstore.Record{Partition: p, Version: e.ver, Key: e.key, Value: e.value, Deleted: e.typ == typeDelete, Expires: e.exp})
	})
	if err != nil {
		return err
	}
	if in.fresh {
		s.markLoaded(p, in)
	}
	return nil
}

// keyString returns b as a string sharing its bytes. The store only
// passes bytes it never changes: a read file, or a segment's records.
func keyString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// LoadPartition implements mapstore.MapStore. The first call for a
// partition uses what Open scanned; later calls read storage again.
func (s *Store) LoadPartition(ctx context.Context, p int, fn func(mapstore.Record) error) error {
	s.loads.Add(1)
	defer s.loadEnded()
	in, err := s.partitionInput(ctx, p)
	if err != nil {
		return err
	}
	live, err := s.build(ctx, p, in.recs, in.snaps, in.pre)
	if err != nil {
		return err
	}
	if in.fresh {
		s.markLoaded(p, in)
	}
	for _, e := range live {
		if e.deleted {
			continue
		}
		if err := fn(mapstore.Record{Partition: p, Version: e.ver, Key: e.key, Value: e.value, Expires: e.exp}); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) snapsOf(all []snapFile, p int) []snapFile {
	var out []snapFile
	for _, sf := range all {
		if q, _, ok := parseSnapName(sf.name); ok && q == p {
			out = append(out, sf)
		}
	}
	return out
}

// Load implements mapstore.MapStore by reading the key's partition.
func (s *Store) Load(ctx context.Context, key []byte) (mapstore.Record, bool, error) {
	rs, err := s.LoadAll(ctx, [][]byte{key})
	if err != nil || len(rs) == 0 {
		return mapstore.Record{}, false, err
	}
	return rs[0], true, nil
}

// LoadAll implements mapstore.MapStore; each partition involved is read once.
func (s *Store) LoadAll(ctx context.Context, keys [][]byte) ([]mapstore.Record, error) {
	byPart := map[int][][]byte{}
	for _, k := range keys {
		p := keyhash.Partition(k, s.parts)
		byPart[p] = append(byPart[p], k)
	}
	live, err := s.readParts(ctx, func(p int) bool { return byPart[p] != nil })
	if err != nil {
		return nil, err
	}
	var out []mapstore.Record
	for p, ks := range byPart {
		for _, k := range ks {
			if e := live[p][string(k)]; e != nil && !e.deleted {
				out = append(out, mapstore.Record{Partition: p, Version: e.ver, Key: append([]byte(nil), k...), Value: append([]byte(nil), e.value...), Expires: e.exp})
			}
		}
	}
	return out, nil
}

// LoadAllKeys implements mapstore.MapStore.
func (s *Store) LoadAllKeys(ctx context.Context) ([][]byte, error) {
	live, err := s.readParts(ctx, func(int) bool { return true })
	if err != nil {
		return nil, err
	}
	var out [][]byte
	for _, m := range live {
		for k, e := range m {
			if !e.deleted {
				out = append(out, []byte(k))
			}
		}
	}
	return out, nil
}

// Entries calls fn for every live entry of every partition, reading
// storage: the log once, then each partition's snapshot as it is built.
// It is what inspect's dump and stats use.
func (s *Store) Entries(ctx context.Context, fn func(mapstore.Record) error) error {
	if s.isClosed() {
		return mapstore.ErrClosed
	}
	rr, err := s.reread(ctx, func(int) bool { return true }, false)
	if err != nil {
		return err
	}
	byPart := rr.byPart
	prog := progressOf(ctx)
	prog.expect(s.parts)
	for p := 0; p < s.parts; p++ {
		live, err := s.build(ctx, p, byPart[p], s.snapsOf(rr.snaps, p), nil)
		if err != nil {
			return err
		}
		delete(byPart, p)
		for k, e := range live {
			if e.deleted {
				continue
			}
			if err := fn(mapstore.Record{Partition: p, Version: e.ver, Key: []byte(k), Value: e.value, Expires: e.exp}); err != nil {
				return err
			}
		}
		prog.tick()
	}
	return nil
}

func (s *Store) readParts(ctx context.Context, want func(int) bool) (map[int]map[string]*liveEntry, error) {
	if s.isClosed() {
		return nil, mapstore.ErrClosed
	}
	rr, err := s.reread(ctx, want, false)
	if err != nil {
		return nil, err
	}
	out := map[int]map[string]*liveEntry{}
	for p := 0; p < s.parts; p++ {
		if !want(p) {
			continue
		}
		live, err := s.build(ctx, p, rr.byPart[p], s.snapsOf(rr.snaps, p), nil)
		if err != nil {
			return nil, err
		}
		out[p] = live
	}
	return out, nil
}
