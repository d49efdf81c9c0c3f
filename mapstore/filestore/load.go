package filestore

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sort"
	"sync"

	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/mapstore"
	"github.com/stowage/stowage/partition"
	"github.com/stowage/stowage/serde/record"
)

// scan lists the current generation, reads every log file once (in
// parallel) and keeps each partition's records until LoadPartition takes
// them. It also learns which log files each partition's records are in.
func (s *Store) scan(ctx context.Context) error {
	list, err := s.fs.List(ctx, genDir(s.gen))
	if err != nil {
		return fmt.Errorf("stowage/mapstore/filestore: list %s: %w", genDir(s.gen), err)
	}
	s.pending = make([][]logEntry, s.parts)
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
	results, err := s.readLogs(ctx, logs, nil)
	if err != nil {
		return err
	}
	counts := make([]int, s.parts)
	for _, res := range results {
		for _, e := range res {
			if e.part >= 0 && e.part < s.parts {
				counts[e.part]++
			}
		}
	}
	for p, n := range counts {
		s.pending[p] = make([]logEntry, 0, n)
	}
	maxVer := make([]mapstore.Version, s.parts)
	seen := make([]bool, s.parts)
	for i, res := range results {
		lf := s.foundFile(logs[i].Name, logs[i].Size)
		s.files[lf.name] = lf
		if lf.counted {
			s.logTotal += lf.size
		}
		clear(seen)
		for _, e := range res {
			if e.part < 0 || e.part >= s.parts {
				s.damage(Damage{File: lf.name, Reason: fmt.Sprintf("record for partition %d of %d", e.part, s.parts)})
				continue
			}
			if !seen[e.part] || maxVer[e.part].Less(e.ver) {
				seen[e.part], maxVer[e.part] = true, e.ver
			}
			if s.last[e.part].Less(e.ver) {
				s.last[e.part] = e.ver
			}
			if n := len(s.snaps[e.part]); n == 0 || s.snaps[e.part][n-1].upto.Less(e.ver) {
				s.since[e.part] += int64(len(e.key) + len(e.value) + 16)
			}
			s.pending[e.part] = append(s.pending[e.part], e)
		}
		for p, ok := range seen {
			if ok {
				lf.maxVer[p] = maxVer[p]
			}
		}
	}
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

// readLogs reads log files in parallel and returns each file's records,
// keeping only partitions for which want returns true (all if want is nil).
func (s *Store) readLogs(ctx context.Context, logs []fsbackend.FileInfo, want func(int) bool) ([][]logEntry, error) {
	results := make([][]logEntry, len(logs))
	errs := make([]error, len(logs))
	var wg sync.WaitGroup
	sem := make(chan struct{}, max(2, runtime.GOMAXPROCS(0)))
	for i := range logs {
		wg.Add(1)
		sem <- struct{}{}
		go func(i int) {
			defer func() { <-sem; wg.Done() }()
			results[i], _, errs[i] = s.readLog(ctx, logs[i].Name, want)
		}(i)
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("stowage/mapstore/filestore: read %s: %w", logs[i].Name, err)
		}
	}
	return results, nil
}

// readLog reads one log file and returns its records and its size, -1 if
// it is gone.
func (s *Store) readLog(ctx context.Context, name string, want func(int) bool) ([]logEntry, int64, error) {
	buf, err := fsbackend.ReadFile(ctx, s.fs, name)
	if err != nil {
		if errors.Is(err, fsbackend.ErrNotExist) {
			return nil, -1, nil // removed by compaction meanwhile
		}
		return nil, 0, err
	}
	sc := record.NewScanner(buf)
	var out []logEntry
	var arena []byte
	first := true
	for sc.Next() {
		f := sc.Frame()
		if first {
			first = false
			if f.Type == typeLogHeader {
				d := decoder{b: f.Payload}
				h := decodeHeader(&d)
				if d.err == nil && (h.Partitions != uint64(s.parts) || h.Gen != s.gen) {
					s.damage(Damage{File: name, Reason: fmt.Sprintf("header says %d partitions, generation %d; expected %d, %d", h.Partitions, h.Gen, s.parts, s.gen)})
					return nil, int64(len(buf)), nil
				}
				continue
			}
		}
		e, err := decodeRecord(f)
		if err != nil {
			s.damage(Damage{File: name, Offset: sc.Offset(), Length: int64(len(f.Payload) + record.HeaderSize), Reason: err.Error()})
			continue
		}
		if want != nil && !want(e.part) {
			continue
		}
		// Copy the key into a compact arena while its bytes are in the
		// cache: loading looks keys up partition by partition, and small
		// contiguous keys beat keys scattered over whole files.
		if len(arena)+len(e.key) > cap(arena) {
			arena = make([]byte, 0, max(keyArena, len(e.key)))
		}
		start := len(arena)
		arena = append(arena, e.key...)
		e.key = arena[start:len(arena):len(arena)]
		if len(out) == 32 && cap(out) < 64 {
			// Size the slice once from the records seen so far.
			est := int(int64(len(buf)) * 32 / max(1, sc.Offset()))
			grown := make([]logEntry, len(out), est+est/8)
			copy(grown, out)
			out = grown
		}
		out = append(out, e)
	}
	s.mu.Lock()
	lf := s.files[name]
	active := lf != nil && lf.active
	s.mu.Unlock()
	for _, d := range sc.Damages() {
		if d.Tail && (active || s.writtenNow(name)) {
			continue // a batch being written right now
		}
		s.damage(Damage{File: name, Offset: d.Offset, Length: d.Length, Reason: d.Err.Error(), Tail: d.Tail})
	}
	return out, int64(len(buf)), nil
}

// writtenNow reports whether another live run may be writing the named
// log file: its tail may be a batch not finished yet.
func (s *Store) writtenNow(name string) bool {
	run := runOf(name)
	return s.shared() && run != s.run && s.opts.IsLive(run)
}

// keyArena is the size of the chunks that loaded keys are copied into.
const keyArena = 1 << 20

type liveEntry struct {
	key     []byte
	ver     mapstore.Version
	value   []byte
	deleted bool
}

// newestSnapshot returns the entries and version of a partition's newest
// snapshot that decodes completely, falling back to older ones.
func (s *Store) newestSnapshot(ctx context.Context, p int, snaps []snapFile) ([]mapstore.Record, mapstore.Version) {
	for i := len(snaps) - 1; i >= 0; i-- {
		entries, err := s.readSnapshot(ctx, snaps[i].name, p)
		if err != nil {
			s.damage(Damage{File: snaps[i].name, Reason: "snapshot unusable, falling back: " + err.Error()})
			continue
		}
		return entries, snaps[i].upto
	}
	return nil, mapstore.Version{}
}

// replayable returns the log records of a partition that recovery applies,
// sorted by version: above the snapshot's version, and not of an older
// epoch beyond the point a later epoch started from.
func replayable(logRecs []logEntry, upto mapstore.Version) []logEntry {
	type start struct {
		epoch, from uint64
	}
	var starts []start
	for _, e := range logRecs {
		if e.typ == typeEpoch {
			starts = append(starts, start{e.ver.Epoch, e.ver.Seq})
		}
	}
	sort.Slice(starts, func(i, j int) bool { return starts[i].epoch > starts[j].epoch })
	cut := func(v mapstore.Version) bool {
		for _, st := range starts {
			if st.epoch <= v.Epoch {
				return false
			}
			if v.Seq > st.from {
				return true
			}
		}
		return false
	}
	out := make([]logEntry, 0, len(logRecs))
	for _, e := range logRecs {
		if e.typ == typeEpoch || !upto.Less(e.ver) || (len(starts) > 0 && cut(e.ver)) {
			continue
		}
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ver.Less(out[j].ver) })
	return out
}

// build merges a partition's newest readable snapshot and its log records
// into the live entries, ordering by version only.
func (s *Store) build(ctx context.Context, p int, logRecs []logEntry, snaps []snapFile) (map[string]*liveEntry, error) {
	entries, upto := s.newestSnapshot(ctx, p, snaps)
	recs := replayable(logRecs, upto)
	live := make(map[string]*liveEntry, len(entries)+len(recs))
	slab := make([]liveEntry, 0, len(entries)+len(recs))
	for _, e := range entries {
		slab = append(slab, liveEntry{key: e.Key, ver: e.Version, value: e.Value})
		live[string(e.Key)] = &slab[len(slab)-1]
	}
	for _, e := range recs {
		cur := live[string(e.key)]
		if cur != nil && !cur.ver.Less(e.ver) {
			continue
		}
		if cur == nil {
			slab = append(slab, liveEntry{key: e.key})
			cur = &slab[len(slab)-1]
			live[string(e.key)] = cur
		}
		cur.ver, cur.value, cur.deleted = e.ver, e.value, e.typ == typeDelete
	}
	return live, nil
}

// input is what recovery of one partition reads.
type input struct {
	recs   []logEntry
	snaps  []snapFile
	fresh  bool   // the partition is not owned yet: loading makes it owned
	reread bool   // read from storage now, not what Open scanned
	gen    uint64 // ownership generation when the read began
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
	if !in.reread {
		in.recs = s.pending[p]
	}
	in.snaps = append([]snapFile(nil), s.snaps[p]...)
	s.mu.Unlock()
	if in.reread {
		var snaps []snapFile
		in.recs, snaps, err = s.reread(ctx, func(q int) bool { return q == p })
		in.snaps = s.snapsOf(snaps, p)
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
	return len(s.pending[p])
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
	s.since[p] = 0
	for _, e := range in.recs {
		if s.last[p].Less(e.ver) {
			s.last[p] = e.ver
		}
		if upto.Less(e.ver) {
			s.since[p] += int64(len(e.key) + len(e.value) + 16)
		}
	}
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
	in, err := s.partitionInput(ctx, p)
	if err != nil {
		return err
	}
	entries, upto := s.newestSnapshot(ctx, p, in.snaps)
	for _, e := range entries {
		if err := fn(e); err != nil {
			return err
		}
	}
	for _, e := range replayable(in.recs, upto) {
		r := mapstore.Record{Partition: p, Version: e.ver, Key: e.key, Value: e.value, Deleted: e.typ == typeDelete}
		if err := fn(r); err != nil {
			return err
		}
	}
	if in.fresh {
		s.markLoaded(p, in)
	}
	return nil
}

// LoadPartition implements mapstore.MapStore. The first call for a
// partition uses what Open scanned; later calls read storage again.
func (s *Store) LoadPartition(ctx context.Context, p int, fn func(mapstore.Record) error) error {
	in, err := s.partitionInput(ctx, p)
	if err != nil {
		return err
	}
	live, err := s.build(ctx, p, in.recs, in.snaps)
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
		if err := fn(mapstore.Record{Partition: p, Version: e.ver, Key: e.key, Value: e.value}); err != nil {
			return err
		}
	}
	return nil
}

// reread lists and reads the current files again for the wanted partitions.
func (s *Store) reread(ctx context.Context, want func(int) bool) ([]logEntry, []snapFile, error) {
	list, err := s.fs.List(ctx, genDir(s.gen))
	if err != nil {
		return nil, nil, err
	}
	var logs []fsbackend.FileInfo
	var snaps []snapFile
	for _, fi := range list {
		_, kind, ok := parseName(fi.Name)
		if !ok {
			continue
		}
		if kind == kindLog {
			logs = append(logs, fi)
		} else if p, v, ok := parseSnapName(fi.Name); ok && want(p) {
			snaps = append(snaps, snapFile{name: fi.Name, upto: v, bytes: fi.Size})
		}
	}
	res, err := s.readLogs(ctx, logs, want)
	if err != nil {
		return nil, nil, err
	}
	var recs []logEntry
	for _, r := range res {
		recs = append(recs, r...)
	}
	sort.Slice(snaps, func(i, j int) bool { return snaps[i].upto.Less(snaps[j].upto) })
	return recs, snaps, nil
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
		p := partition.Of(k, s.parts)
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
				out = append(out, mapstore.Record{Partition: p, Version: e.ver, Key: append([]byte(nil), k...), Value: append([]byte(nil), e.value...)})
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
// storage; it is what inspect's dump uses.
func (s *Store) Entries(ctx context.Context, fn func(mapstore.Record) error) error {
	for p := 0; p < s.parts; p++ {
		live, err := s.readParts(ctx, func(q int) bool { return q == p })
		if err != nil {
			return err
		}
		for k, e := range live[p] {
			if e.deleted {
				continue
			}
			if err := fn(mapstore.Record{Partition: p, Version: e.ver, Key: []byte(k), Value: e.value}); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *Store) readParts(ctx context.Context, want func(int) bool) (map[int]map[string]*liveEntry, error) {
	if s.isClosed() {
		return nil, mapstore.ErrClosed
	}
	recs, snaps, err := s.reread(ctx, want)
	if err != nil {
		return nil, err
	}
	byPart := map[int][]logEntry{}
	for _, e := range recs {
		byPart[e.part] = append(byPart[e.part], e)
	}
	out := map[int]map[string]*liveEntry{}
	for p := 0; p < s.parts; p++ {
		if !want(p) {
			continue
		}
		live, err := s.build(ctx, p, byPart[p], s.snapsOf(snaps, p))
		if err != nil {
			return nil, err
		}
		out[p] = live
	}
	return out, nil
}
