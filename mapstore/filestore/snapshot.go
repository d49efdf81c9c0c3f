package filestore

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/mapstore"
	"github.com/stowage/stowage/serde/keyhash"
	"github.com/stowage/stowage/serde/record"
)

const (
	snapChunk       = 1 << 20 // bytes of entries per snapshot frame
	minSnapshotLog  = 64 << 10
	compactInterval = 2 * time.Second
	// loadsRecheck is how soon compaction, put off while partitions
	// load, looks again (compactLoop).
	loadsRecheck = 50 * time.Millisecond
	// loadsSettle is how long after the last partition load ended
	// compaction still waits (compactLoop): a member's start or a
	// fail-over loads many partitions one after another, each among other
	// work, and a compaction started in a gap between two loads (the live
	// sizes read from the maps, the snapshots) takes the processor from
	// the maps still being built: on two cores, 110 ms of compaction in
	// the last 60 ms of an EAGER load of a million entries.
	loadsSettle = 100 * time.Millisecond
	// quietAfter is how long after its last write a store counts as idle,
	// when its log is held to the idle budget (see idleBudget).
	quietAfter = time.Second
)

func (s *Store) addFile(name string, size int64, active bool) {
	s.mu.Lock()
	s.files[name] = &logFile{name: name, run: s.run, size: size, maxVer: map[int]mapstore.Version{}, active: active, own: true, final: true, counted: true}
	s.logTotal += size
	s.mu.Unlock()
}

func (s *Store) finishFile(name string) {
	s.mu.Lock()
	if lf := s.files[name]; lf != nil {
		lf.active = false
	}
	s.mu.Unlock()
}

// noteWritten records which partitions' versions a durable batch holds.
func (s *Store) noteWritten(name string, n int64, batch []*request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.noteWrittenLocked(name, n, batch)
}

func (s *Store) noteWrittenLocked(name string, n int64, batch []*request) {
	s.lastWrite = time.Now()
	lf := s.files[name]
	if lf == nil {
		return
	}
	if lf.active {
		lf.size += n
		s.logTotal += n
	}
	for _, r := range batch {
		per := int64(len(r.buf)) / int64(max(1, len(r.vers)))
		for _, pv := range r.vers {
			s.stale[pv.p] = true
			if mv, ok := lf.maxVer[pv.p]; !ok || mv.Less(pv.v) {
				lf.maxVer[pv.p] = pv.v
			}
			if s.last[pv.p].Less(pv.v) {
				s.last[pv.p] = pv.v
			}
			s.since[pv.p] += per
		}
	}
}

// compactLoop compacts on every batch written, every compactInterval and
// once the store turns quiet. While partitions load (an EAGER load after
// Open, a take-over) it puts compaction off, for at most compactInterval
// at a time: the snapshots it would write are of partitions just loaded,
// and written beside the loads they take processor, disk and memory from
// them (a load that runs past the first tick would otherwise snapshot, and
// hold the encoded snapshots of, what it loaded so far).
func (s *Store) compactLoop(ctx context.Context) {
	t := time.NewTicker(compactInterval)
	defer t.Stop()
	quiet := time.NewTimer(time.Hour)
	quiet.Stop()
	defer quiet.Stop()
	recheck := time.NewTimer(time.Hour)
	recheck.Stop()
	defer recheck.Stop()
	var putOff time.Time // since when compaction waits for loads (zero: it does not)
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.compactC:
		case <-t.C:
		case <-quiet.C:
		case <-recheck.C:
		}
		if s.putOffForLoads(&putOff, time.Now()) {
			recheck.Reset(loadsRecheck)
			continue
		}
		if err := s.Compact(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("stowage/mapstore/filestore: compaction", "err", err)
		}
		if d, ok := s.untilQuiet(); ok {
			quiet.Reset(d)
		}
	}
}

// loadEnded counts a partition load as ended.
func (s *Store) loadEnded() {
	s.loadEnd.Store(time.Now().UnixNano())
	s.loads.Add(-1)
}

// putOffForLoads reports whether compaction waits at now for the
// partition loads running, or ended less than loadsSettle ago: while some
// run, for at most compactInterval since it began to wait (*putOff, zero
// when it is not waiting, which it updates).
func (s *Store) putOffForLoads(putOff *time.Time, now time.Time) bool {
	if s.loads.Load() == 0 && now.Sub(time.Unix(0, s.loadEnd.Load())) >= loadsSettle {
		*putOff = time.Time{}
		return false
	}
	if putOff.IsZero() {
		*putOff = now
	}
	if now.Sub(*putOff) < compactInterval {
		return true
	}
	*putOff = time.Time{}
	return false
}

// untilQuiet reports how long until the store counts as idle (quietAfter
// after its last write), if it is not idle yet and its log is over the
// idle budget then: compaction runs again at that moment, so that a map
// is brought within its idle budget about a second after a burst of
// writes rather than up to a compaction tick later.
func (s *Store) untilQuiet() (time.Duration, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lastWrite.IsZero() || s.closed {
		return 0, false
	}
	d := quietAfter - time.Since(s.lastWrite)
	return d, d > 0 && s.overIdleBudget()
}

// Compact implements mapstore.Snapshotter: it snapshots, from memory, every
// partition this store owns whose log since its last snapshot has outgrown
// CompactRatio of its live bytes, and every partition acquired and not
// snapshotted since. While the log is larger than its budget (logBudget),
// or, once no batch was written for quietAfter, larger than the idle
// budget (idleBudget), it first finishes the segment being written, so
// that it can go too however few of its records are live, and snapshots
// every owned partition that has records in the log. Then it deletes the
// log files and snapshots that newer snapshots cover. Compactions run one
// at a time.
func (s *Store) Compact(ctx context.Context) error {
	s.compactMu.Lock()
	defer s.compactMu.Unlock()
	s.mu.Lock()
	src, closed := s.source, s.closed
	s.mu.Unlock()
	if src == nil || closed || s.fenced() {
		return nil
	}
	live := s.liveness()
	s.mu.Lock()
	all, roll := s.overBudget()
	recheck := all && !s.quiet() && s.collectableBytes() >= logSlack
	s.mu.Unlock()
	if recheck {
		// Over the budget while written, with a log of a few MiB: snapshot
		// only if enough of it is dead (livecheck.go).
		if err := s.checkLive(ctx, src); err != nil {
			return err
		}
		s.mu.Lock()
		all, roll = s.overBudget()
		s.mu.Unlock()
	}
	if roll {
		if err := s.w.rollSegment(ctx); err != nil && !errors.Is(err, mapstore.ErrClosed) {
			return err
		}
	}
	s.mu.Lock()
	var due []int
	for p := 0; p < s.parts; p++ {
		if !s.owned[p] {
			continue
		}
		limit := max(int64(float64(s.liveBytes[p])*s.opts.CompactRatio), minSnapshotLog)
		if s.since[p] > limit || s.acquired[p] {
			due = append(due, p)
		}
	}
	// Over the budget: snapshot every partition that has records in the
	// log since its snapshot or holds a finished file back. Files that
	// wait only for other members' snapshots are left out: snapshotting
	// here would not free them.
	if all {
		held := s.holdingBack()
		due = due[:0]
		for p := 0; p < s.parts; p++ {
			if s.owned[p] && (s.since[p] > 0 || s.acquired[p] || held[p]) {
				due = append(due, p)
			}
		}
	}
	s.mu.Unlock()
	if err := s.snapshotAll(ctx, src, due); err != nil {
		return err
	}
	if all {
		s.mu.Lock()
		s.check = liveCheck{} // the snapshots now say what is live
		s.mu.Unlock()
	}
	return s.collect(ctx, live)
}

// overBudget reports whether the log this store can collect is over its
// budget (while written) or its idle budget (once quiet), so that every
// partition with records in it is to be snapshotted (all), and whether
// the segment being written should be finished first (roll): when it is
// over minSnapshotLog, which keeps a log held over its budget by what
// compaction cannot free from being cut into tiny segments. s.mu held.
func (s *Store) overBudget() (all, roll bool) {
	all = s.deadEstimate() > s.logBudget(s.liveTotal()) || (s.quiet() && s.overIdleBudget())
	if !all {
		return false, false
	}
	for _, lf := range s.files {
		if lf.active && lf.size > minSnapshotLog {
			return true, true
		}
	}
	return true, false
}

// quiet reports whether nothing was written for quietAfter. s.mu held.
func (s *Store) quiet() bool { return time.Since(s.lastWrite) >= quietAfter }

// holdingBack returns the owned partitions with records in a finished log
// file this store may delete that their snapshots do not cover yet. s.mu
// held.
func (s *Store) holdingBack() map[int]bool {
	held := map[int]bool{}
	for _, lf := range s.files {
		if lf.active || !lf.counted {
			continue
		}
		for p, v := range lf.maxVer {
			if s.owned[p] && !s.covered(p, v) {
				held[p] = true
			}
		}
	}
	return held
}

// snapshotParallel is how many partition snapshots are written at once, so
// that their syncs overlap.
const snapshotParallel = 8

func (s *Store) snapshotAll(ctx context.Context, src mapstore.SnapshotSource, due []int) error {
	next := make(chan int)
	errc := make(chan error, snapshotParallel)
	prog := progressOf(ctx)
	prog.expect(len(due))
	var wg sync.WaitGroup
	for w := 0; w < min(snapshotParallel, len(due)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range next {
				if err := s.snapshot(ctx, src, p); err != nil {
					errc <- err
					return
				}
				prog.tick()
			}
		}()
	}
	var err error
loop:
	for _, p := range due {
		select {
		case next <- p:
		case err = <-errc:
			break loop
		case <-ctx.Done():
			err = ctx.Err()
			break loop
		}
	}
	close(next)
	wg.Wait()
	close(errc)
	if err != nil {
		return err
	}
	return <-errc
}

// snapshot writes partition p's live entries from memory, reads the file
// back, and only then makes it the partition's newest snapshot. Entries of
// a partition released while the source was asked for them are dropped:
// the source may no longer hold it. After Acquire, the snapshots of p on
// storage are listed first, so that this one replaces them.
func (s *Store) snapshot(ctx context.Context, src mapstore.SnapshotSource, p int) error {
	if s.fenced() {
		return nil // a compaction under way when the fence came stops here
	}
	s.mu.Lock()
	gen, acquired := s.ownGen[p], s.acquired[p]
	if !s.owned[p] {
		s.mu.Unlock()
		return nil
	}
	s.mu.Unlock()
	entries, upto, err := src(ctx, p)
	if err != nil {
		s.mu.Lock()
		released := !s.owned[p] || s.ownGen[p] != gen
		s.mu.Unlock()
		if released {
			return nil // the source no longer serves p: nothing to snapshot
		}
		return fmt.Errorf("stowage/mapstore/filestore: snapshot source for partition %d: %w", p, err)
	}
	if acquired {
		done, err := s.adopt(ctx, p, gen, upto)
		if done || err != nil {
			return err
		}
	}
	s.mu.Lock()
	if !s.owned[p] || s.ownGen[p] != gen {
		s.mu.Unlock()
		return nil
	}
	sn := s.snaps[p]
	if n := len(sn); n > 0 && !sn[n-1].upto.Less(upto) {
		s.since[p], s.deleted[p] = 0, 0
		s.mu.Unlock()
		return nil
	}
	s.mu.Unlock()
	if s.fenced() {
		return nil // the fence came while the source was read
	}
	name := snapName(s.gen, p, upto)
	data, live := encodeSnapshot(fileHeader{Format: FormatVersion, Partitions: uint64(s.parts), Gen: s.gen, Run: s.run}, p, upto, entries)
	if err := fsbackend.WriteFile(ctx, s.fs, name, data); err != nil {
		if errors.Is(err, fsbackend.ErrExist) {
			return nil
		}
		return fmt.Errorf("stowage/mapstore/filestore: write snapshot %s: %w", name, err)
	}
	if _, _, err := s.readSnapshot(ctx, name, p); err != nil {
		_ = s.fs.Remove(ctx, name)
		return fmt.Errorf("stowage/mapstore/filestore: snapshot %s did not read back clean: %w", name, err)
	}
	fenced := s.fenced() // older snapshots stay until a round after the fence
	s.mu.Lock()
	s.snaps[p] = insertSnap(s.snaps[p], snapFile{name: name, upto: upto, bytes: int64(len(data))})
	var drop []snapFile
	if s.owned[p] && s.ownGen[p] == gen {
		s.since[p], s.deleted[p] = 0, 0
		s.liveBytes[p], s.entries[p] = live, int64(len(entries))
		s.acquired[p] = false
		if n := len(s.snaps[p]); n > s.opts.SnapshotRetain && !fenced {
			drop = append(drop, s.snaps[p][:n-s.opts.SnapshotRetain]...)
			s.snaps[p] = append([]snapFile(nil), s.snaps[p][n-s.opts.SnapshotRetain:]...)
		}
	}
	s.snapped = true
	s.mu.Unlock()
	for _, sf := range drop {
		if err := s.fs.Remove(ctx, sf.name); err != nil && !errors.Is(err, fsbackend.ErrNotExist) {
			return fmt.Errorf("stowage/mapstore/filestore: remove %s: %w", sf.name, err)
		}
	}
	return nil
}

// insertSnap adds sf to a partition's snapshots, keeping them ordered by
// version, oldest first, and each name once.
func insertSnap(sn []snapFile, sf snapFile) []snapFile {
	for _, have := range sn {
		if have.name == sf.name {
			return sn
		}
	}
	sn = append(sn, sf)
	sort.Slice(sn, func(i, j int) bool { return sn[i].upto.Less(sn[j].upto) })
	return sn
}

// encodeSnapshot frames a snapshot: header, chunks of entries, end frame.
func encodeSnapshot(h fileHeader, p int, upto mapstore.Version, entries []mapstore.Record) ([]byte, int64) {
	hp := encodeHeader(nil, h)
	hp = record.AppendUvarint(hp, uint64(p))
	hp = record.AppendUvarint(hp, upto.Epoch)
	hp = record.AppendUvarint(hp, upto.Seq)
	out := record.Append(nil, typeSnapHeader, hp)
	// Entries without a deadline go to C chunks, those with one to K
	// chunks (the same fields with the deadline after the version).
	var chunk, chunkX []byte
	var live int64
	for i := range entries {
		e := &entries[i]
		if e.Expires != 0 {
			chunkX = record.AppendBytes(chunkX, e.Key)
			chunkX = record.AppendUvarint(chunkX, e.Version.Epoch)
			chunkX = record.AppendUvarint(chunkX, e.Version.Seq)
			chunkX = record.AppendUvarint(chunkX, uint64(e.Expires))
			chunkX = record.AppendBytes(chunkX, e.Value)
		} else {
			chunk = record.AppendBytes(chunk, e.Key)
			chunk = record.AppendUvarint(chunk, e.Version.Epoch)
			chunk = record.AppendUvarint(chunk, e.Version.Seq)
			chunk = record.AppendBytes(chunk, e.Value)
		}
		live += int64(len(e.Key) + len(e.Value))
		if len(chunk) >= snapChunk {
			out = record.Append(out, typeSnapChunk, chunk)
			chunk = chunk[:0]
		}
		if len(chunkX) >= snapChunk {
			out = record.Append(out, typeSnapChunkX, chunkX)
			chunkX = chunkX[:0]
		}
	}
	if len(chunk) > 0 {
		out = record.Append(out, typeSnapChunk, chunk)
	}
	if len(chunkX) > 0 {
		out = record.Append(out, typeSnapChunkX, chunkX)
	}
	out = record.Append(out, typeSnapEnd, record.AppendUvarint(nil, uint64(len(entries))))
	return out, live
}

// readSnapshot reads a whole snapshot and checks it; any damage makes it
// unusable, so that the caller falls back to an older one. It returns the
// snapshot's bytes, for snapshotEntries, and its entry count.
func (s *Store) readSnapshot(ctx context.Context, name string, p int) ([]byte, int, error) {
	buf, err := fsbackend.ReadFile(ctx, s.fs, name)
	if err != nil {
		return nil, 0, err
	}
	n, err := checkSnapshot(buf, p, s.parts)
	return buf, n, err
}

// checkSnapshot checks that buf is a whole snapshot of partition p (of
// parts) and returns its entry count.
func checkSnapshot(buf []byte, p, parts int) (int, error) {
	sc := record.NewScanner(buf)
	count := 0
	state := 0
	for sc.Next() {
		f := sc.Frame()
		r := record.NewReader(f.Payload)
		switch {
		case state == 0 && f.Type == typeSnapHeader:
			h := decodeHeader(&r)
			hp := r.Uvarint()
			if r.Err() != nil || h.Format != FormatVersion || int(h.Partitions) != parts || int(hp) != p {
				return 0, fmt.Errorf("header does not match partition %d of %d", p, parts)
			}
			state = 1
		case state == 1 && (f.Type == typeSnapChunk || f.Type == typeSnapChunkX):
			for r.Len() > 0 {
				r.Bytes()
				r.Uvarint()
				r.Uvarint()
				if f.Type == typeSnapChunkX {
					r.Uvarint()
				}
				r.Bytes()
				if r.Err() == nil {
					count++
				}
			}
			if err := payloadErr(&r); err != nil {
				return 0, err
			}
		case state == 1 && f.Type == typeSnapEnd:
			n := r.Uvarint()
			if r.Err() != nil || n != uint64(count) {
				return 0, fmt.Errorf("end frame counts %d entries, found %d", n, count)
			}
			state = 2
		default:
			return 0, fmt.Errorf("unexpected frame %q at offset %d", f.Type, sc.Offset())
		}
	}
	if ds := sc.Damages(); len(ds) > 0 {
		return 0, fmt.Errorf("damage at offset %d: %w", ds[0].Offset, ds[0].Err)
	}
	if state != 2 {
		return 0, errors.New("snapshot is incomplete (no end frame)")
	}
	return count, nil
}

// snapshotEntries calls fn with each entry of a snapshot checkSnapshot
// accepted, in order; key and value alias buf.
func snapshotEntries(buf []byte, fn func(key, value []byte, v mapstore.Version, exp int64) error) error {
	for off := 0; off+record.HeaderSize <= len(buf); {
		n := int(binary.LittleEndian.Uint32(buf[off+4 : off+8]))
		typ, end := buf[off+3], off+record.HeaderSize+n
		r := record.NewReader(buf[off+record.HeaderSize : end : end])
		off = end
		if typ != typeSnapChunk && typ != typeSnapChunkX {
			continue
		}
		for r.Len() > 0 {
			key := r.Bytes()
			v := mapstore.Version{Epoch: r.Uvarint(), Seq: r.Uvarint()}
			var exp int64
			if typ == typeSnapChunkX {
				exp = int64(r.Uvarint())
			}
			if err := fn(key, r.Bytes(), v, exp); err != nil {
				return err
			}
		}
	}
	return nil
}

// decodeSnapshot returns the entries of a whole snapshot of partition p.
func decodeSnapshot(buf []byte, p, parts int) ([]mapstore.Record, error) {
	n, err := checkSnapshot(buf, p, parts)
	if err != nil {
		return nil, err
	}
	out := make([]mapstore.Record, 0, n)
	err = snapshotEntries(buf, func(key, value []byte, v mapstore.Version, exp int64) error {
		out = append(out, mapstore.Record{Partition: p, Version: v, Key: key, Value: value, Expires: exp})
		return nil
	})
	return out, err
}

// rehash rewrites a map stored with another partition count: it reads every
// old partition, writes snapshots of the new partitions into the next
// generation, switches META to it, and removes the old generation.
func (s *Store) rehash(ctx context.Context, m metaInfo) error {
	old := &Store{opts: s.opts, fs: s.fs, parts: int(m.Partitions), gen: m.Gen, run: s.run, log: s.log}
	defer old.rr.close()
	if err := old.scan(ctx); err != nil {
		return err
	}
	newParts := make([][]mapstore.Record, s.parts)
	var maxEpoch uint64
	for p := 0; p < old.parts; p++ {
		if old.last[p].Epoch > maxEpoch {
			maxEpoch = old.last[p].Epoch
		}
		live, err := old.build(ctx, p, old.pending[p], old.snaps[p], nil)
		if err != nil {
			return err
		}
		for k, e := range live {
			if e.deleted {
				continue
			}
			np := keyhash.Partition([]byte(k), s.parts)
			newParts[np] = append(newParts[np], mapstore.Record{Partition: np, Key: []byte(k), Value: e.value, Expires: e.exp})
		}
	}
	gen := m.Gen + 1
	for p, entries := range newParts {
		v := mapstore.Version{Epoch: maxEpoch + 1, Seq: uint64(len(entries))}
		for i := range entries {
			entries[i].Version = mapstore.Version{Epoch: maxEpoch + 1, Seq: uint64(i + 1)}
		}
		data, _ := encodeSnapshot(fileHeader{Format: FormatVersion, Partitions: uint64(s.parts), Gen: gen, Run: s.run}, p, v, entries)
		name := snapName(gen, p, v)
		if err := s.fs.Remove(ctx, name); err != nil && !errors.Is(err, fsbackend.ErrNotExist) {
			return err
		}
		if err := fsbackend.WriteFile(ctx, s.fs, name, data); err != nil {
			return fmt.Errorf("stowage/mapstore/filestore: re-hash to %d partitions: %w", s.parts, err)
		}
	}
	nm := metaInfo{Format: FormatVersion, Partitions: uint64(s.parts), Gen: gen, HashID: keyhash.ID, Codec: m.Codec}
	if err := fsbackend.WriteFileAtomic(ctx, s.fs, metaName, s.run, encodeMeta(nm)); err != nil {
		return fmt.Errorf("stowage/mapstore/filestore: write %s: %w", metaName, err)
	}
	s.log.Info("stowage/mapstore/filestore: re-hashed map", "from", m.Partitions, "to", s.parts)
	list, err := s.fs.List(ctx, genDir(m.Gen))
	if err == nil {
		for _, fi := range list {
			_ = s.fs.Remove(ctx, fi.Name)
		}
	}
	s.gen = gen
	return nil
}

// ForceCompact snapshots every partition this store owns that changed
// since its last snapshot, whatever its log size, then deletes what is
// covered (`stowage inspect compact` and tests use it).
func (s *Store) ForceCompact(ctx context.Context) error {
	s.compactMu.Lock()
	defer s.compactMu.Unlock()
	s.mu.Lock()
	src := s.source
	var due []int
	for p := 0; p < s.parts; p++ {
		if s.owned[p] {
			due = append(due, p)
		}
	}
	s.mu.Unlock()
	if src == nil {
		return errors.New("stowage/mapstore/filestore: no snapshot source set")
	}
	live := s.liveness()
	if err := s.snapshotAll(ctx, src, due); err != nil {
		return err
	}
	return s.collect(ctx, live)
}

// CompactOffline compacts a map no member is using: it loads every
// partition, snapshots it as of its last version, and deletes the log
// files and snapshots that are then covered.
func (s *Store) CompactOffline(ctx context.Context) error {
	mem := make([][]mapstore.Record, s.parts)
	prog := progressOf(ctx)
	prog.expect(s.parts)
	for p := 0; p < s.parts; p++ {
		err := s.LoadPartition(ctx, p, func(r mapstore.Record) error {
			mem[p] = append(mem[p], r)
			return nil
		})
		if err != nil {
			return err
		}
		prog.tick()
	}
	s.SetSnapshotSource(func(ctx context.Context, p int) ([]mapstore.Record, mapstore.Version, error) {
		return mem[p], s.LastVersion(p), nil
	})
	return s.ForceCompact(ctx)
}
