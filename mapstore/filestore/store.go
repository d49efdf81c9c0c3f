package filestore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/mapstore"
	"github.com/stowage/stowage/serde/keyhash"
	"github.com/stowage/stowage/serde/record"
)

// Options configure a Store. The zero value of each field but FS means its
// default.
type Options struct {
	// FS is rooted at the map's own directory
	// (namespace/clusterName/<map>); the store touches nothing outside it.
	FS fsbackend.FS
	// Backend, if set, is closed by Close after the store: the back end
	// that FS was made from (fsbackend.Sub), given to the store to own
	// (an Open that fails leaves it to the caller).
	Backend io.Closer
	// Fence, if set, is asked before the store's own background work
	// changes storage (a compaction: snapshots, a rolled segment, removal
	// of covered files); while it returns an error that work waits for a
	// later round. It is how a member whose cluster cannot confirm it
	// still holds the namespace keeps off files another cluster may own
	// by then. Writes are fenced by the caller (mapstore.Admitter).
	Fence func() error
	// Partitions is the partition count (default keyhash.DefaultPartitions).
	// A map stored with another count is re-hashed on Open.
	Partitions int
	// SegmentSize is the size at which a local log segment is rolled
	// (the map-store property block.size; default 64 MiB). Compaction
	// rolls it earlier when the log's budget is exceeded, so a small map
	// does not keep a segment of dead records (see Store.Compact).
	SegmentSize int64
	// SnapshotRetain is how many snapshots per partition are kept (1 or
	// 2, default 1). With 2, a snapshot damaged at rest falls back to the
	// previous snapshot plus the log after it, for about one live size
	// more disk; with 1, disk stays within about twice the live bytes.
	SnapshotRetain int
	// CompactRatio triggers a partition's snapshot once its log since the
	// last snapshot exceeds this fraction of its live bytes (default 0.5).
	CompactRatio float64
	// RunID names this member run's log directory (default: time + random).
	// Every member sharing the map directory opens its own Store with its
	// own RunID.
	RunID string
	// IsLive reports whether another member run (named by its RunID) may
	// still write log files. It must return false only for runs that will
	// never write again (closed, or crashed and not coming back); it is
	// called without the store's locks held, and must not call the Store.
	// A store deletes another run's log files only once IsLive returned
	// false for that run. Nil means no other run is live: one member uses
	// the map directory, and files of earlier runs are collected as soon as
	// snapshots cover them.
	IsLive func(run string) bool
	// RefreshInterval is how often, at most, a store that shares the map
	// directory (IsLive set) lists it again to learn the snapshots other
	// runs wrote and the files of runs that ended, while some log file
	// waits for them (less often while listing frees nothing); with
	// nothing waiting it lists every six intervals, to find the files of
	// runs that started after it and ended (default 10 s).
	RefreshInterval time.Duration
	// Logger receives warnings about damage (default slog.Default()).
	Logger *slog.Logger
	// OnDamage, if set, is called for every piece of damage found.
	OnDamage func(Damage)
	// MaxInFlight bounds how many batch files are written at once on back
	// ends without durable append (HDFS, object stores), where each batch
	// is a new file: a batch is acknowledged once its own file and every
	// earlier batch's are durable (default 8; 1 writes one at a time).
	// Local disk appends every batch to one segment, one at a time.
	MaxInFlight int
	// CommitDelay bounds how long the group committer waits for more
	// callers before it writes and syncs a batch (0: DefaultCommitDelay;
	// negative: never). On a DurableAppend back end (local disk) it waits
	// only when the previous batch carried several callers, and only until
	// as many are queued again; on the open files of a SyncOpen back end
	// (HDFS) until the callers of its last batch and those queued behind
	// it are back, and never longer than that batch took to sync. A lone
	// writer's put is written at once, and so is a batch whose callers
	// are all queued already. Measured in bench/README.md ("Group commit:
	// a delay for company", "HDFS: one open file that waits for company").
	CommitDelay time.Duration
	// OpenFiles is how many log files a store keeps open at once on a
	// SyncOpen back end (HDFS), each for the partitions equal to its index
	// modulo OpenFiles, each with its own group commit and sync (0:
	// DefaultOpenFiles; at most MaxOpenFiles). See lanes.go.
	OpenFiles int
	// OnBatch, if set, is called after each group-commit batch.
	OnBatch func(records, bytes int, took time.Duration, err error)
}

// DefaultCommitDelay is Options.CommitDelay's default. Several members
// sharing a disk sync batches of 1–2 callers without it; with it a sync
// carries several, at up to this much more latency for a caller whose
// company does not come.
const DefaultCommitDelay = 2 * time.Millisecond

// Damage describes bytes that could not be used.
type Damage struct {
	File   string `json:"file"`
	Offset int64  `json:"offset"`
	Length int64  `json:"length"`
	Reason string `json:"reason"`
	// Tail marks a torn tail: the end of a file whose writer died. It is
	// cut (ignored), and is expected after a crash.
	Tail bool `json:"tail"`
}

func (d Damage) String() string {
	kind := "damage"
	if d.Tail {
		kind = "torn tail"
	}
	return fmt.Sprintf("%s in %s at offset %d (%d bytes): %s", kind, d.File, d.Offset, d.Length, d.Reason)
}

// The optional interfaces of the map store contract that Store implements.
var (
	_ mapstore.MapStore       = (*Store)(nil)
	_ mapstore.Snapshotter    = (*Store)(nil)
	_ mapstore.LastVersioner  = (*Store)(nil)
	_ mapstore.EpochStarter   = (*Store)(nil)
	_ mapstore.Replayer       = (*Store)(nil)
	_ mapstore.KeyReplayer    = (*Store)(nil)
	_ mapstore.Admitter       = (*Store)(nil)
	_ mapstore.PartitionOwner = (*Store)(nil)
)

// Store is the file map store. It is safe for concurrent use.
type Store struct {
	opts  Options
	fs    fsbackend.FS
	parts int
	gen   uint64
	run   string
	log   *slog.Logger

	mu        sync.Mutex
	closed    bool
	pending   []found             // per partition: log records found at Open, until loaded
	pre       []*preSnap          // per partition: its newest snapshot read ahead, until loaded
	stale     []bool              // pending is incomplete: written since Open, or released
	owned     []bool              // this store snapshots the partition (loaded or acquired)
	acquired  []bool              // acquired and not snapshotted since
	ownGen    []uint64            // bumped by Acquire and Release
	files     map[string]*logFile // log files known: own, and other runs'
	snaps     [][]snapFile        // per partition, oldest first
	last      []mapstore.Version  // highest version seen per partition
	since     []int64             // log bytes per partition since its newest snapshot
	liveBytes []int64             // live bytes per partition as of its newest snapshot
	entries   []int64             // entries per partition in its newest snapshot this store wrote
	deleted   []int64             // deletes per partition written since its newest snapshot
	source    mapstore.SnapshotSource
	sizes     mapstore.LiveSizes // optional, for the live check
	logTotal  int64              // bytes in log files this store may collect (counted)
	held      int64              // of those, bytes held back only by partitions owned elsewhere
	snapped   bool               // a snapshot was written since the last collect
	lastWrite time.Time          // when the last batch became durable
	progress  chan struct{}      // closed and replaced when compaction deleted files
	check     liveCheck          // what the snapshot source said was live (livecheck.go)

	compactMu sync.Mutex // one compaction at a time
	refreshMu sync.Mutex // one refresh at a time
	refreshed refreshState
	rr        rereads
	// loads counts the partition loads running (ReplayPartition,
	// ReplayPartitionKeys, LoadPartition): compaction waits for them
	// (compactLoop).
	loads atomic.Int32
	// loadEnd is when the last of them ended (Unix nanoseconds).
	loadEnd atomic.Int64

	w        *writer
	compactC chan struct{}
	stop     context.CancelFunc
	done     sync.WaitGroup
}

type logFile struct {
	name   string
	run    string
	size   int64
	maxVer map[int]mapstore.Version
	active bool // this store's segment being written
	own    bool // written by this store's run
	// final: maxVer is complete, because the file is this store's own, or
	// was read after its run ended (or no other run is live).
	final bool
	// counted: the file is in logTotal, because this store may collect
	// it (its own, or its run is not live).
	counted bool
	// unfinished: another run's file whose frames ended before the file
	// when it was read (logRead.unfinished): its run may have written more
	// without changing its size, so refresh reads it again once the run
	// ended.
	unfinished bool
}

type snapFile struct {
	name  string
	upto  mapstore.Version
	bytes int64
}

// Open opens (creating if needed) the map directory on opts.FS and scans it.
// Entries are read into memory by LoadPartition.
func Open(ctx context.Context, opts Options) (*Store, error) {
	if opts.FS == nil {
		return nil, errors.New("stowage/mapstore/filestore: Options.FS is nil")
	}
	if opts.Partitions <= 0 {
		opts.Partitions = keyhash.DefaultPartitions
	}
	if opts.SegmentSize <= 0 {
		opts.SegmentSize = 64 << 20
	}
	if opts.OpenFiles <= 0 {
		opts.OpenFiles = DefaultOpenFiles
	}
	opts.OpenFiles = min(opts.OpenFiles, MaxOpenFiles)
	if opts.SnapshotRetain <= 0 {
		opts.SnapshotRetain = 1
	}
	if opts.SnapshotRetain > 2 {
		return nil, fmt.Errorf("stowage/mapstore/filestore: SnapshotRetain %d: must be 1 or 2", opts.SnapshotRetain)
	}
	if opts.CompactRatio <= 0 {
		opts.CompactRatio = 0.5
	}
	if opts.MaxInFlight <= 0 {
		opts.MaxInFlight = DefaultMaxInFlight
	}
	if opts.RefreshInterval <= 0 {
		opts.RefreshInterval = 10 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.RunID == "" {
		opts.RunID = NewRunID()
	} else if err := fsbackend.ValidName(opts.RunID); err != nil {
		return nil, fmt.Errorf("stowage/mapstore/filestore: RunID: %w", err)
	}
	s := &Store{opts: opts, fs: opts.FS, parts: opts.Partitions, run: opts.RunID, log: opts.Logger, progress: make(chan struct{})}
	m, err := s.openMeta(ctx)
	if err != nil {
		return nil, err
	}
	s.gen = m.Gen
	if int(m.Partitions) != s.parts {
		if err := s.rehash(ctx, m); err != nil {
			return nil, err
		}
	}
	if err := s.scan(ctx); err != nil {
		return nil, err
	}
	s.refreshed.at = time.Now() // scan listed the directory just now
	s.entries, s.deleted = make([]int64, s.parts), make([]int64, s.parts)
	s.w = newWriter(s)
	cctx, cancel := context.WithCancel(context.Background())
	s.stop = cancel
	s.compactC = make(chan struct{}, 1)
	s.startPrefetch(cctx)
	s.done.Add(2)
	go func() { defer s.done.Done(); s.w.run() }()
	go func() { defer s.done.Done(); s.compactLoop(cctx) }()
	return s, nil
}

// NewRunID returns a fresh member-run id: UTC time plus 8 random hex digits.
func NewRunID() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return time.Now().UTC().Format("20060102T150405") + "-" + hex.EncodeToString(b[:])
}

// metaInfo is the content of META.
type metaInfo struct {
	Format     uint64
	Partitions uint64
	Gen        uint64
	HashID     string
	// Codec names the codecs of the map's keys and values ("" none
	// recorded); written only when set, so a META without it is byte for
	// byte as before, and older builds ignore it.
	Codec string
}

const metaName = "META"

func encodeMeta(m metaInfo) []byte {
	p := record.AppendUvarint(nil, m.Format)
	p = record.AppendUvarint(p, m.Partitions)
	p = record.AppendUvarint(p, m.Gen)
	p = record.AppendBytes(p, []byte(m.HashID))
	if m.Codec != "" {
		p = record.AppendBytes(p, []byte(m.Codec))
	}
	return record.Append(nil, typeMeta, p)
}

func decodeMeta(b []byte) (metaInfo, error) {
	f, n, err := record.Decode(b)
	if err != nil {
		return metaInfo{}, err
	}
	if f.Type != typeMeta || n != len(b) {
		return metaInfo{}, errPayload
	}
	r := record.NewReader(f.Payload)
	m := metaInfo{Format: r.Uvarint(), Partitions: r.Uvarint(), Gen: r.Uvarint()}
	m.HashID = string(r.Bytes())
	if r.Len() > 0 {
		m.Codec = string(r.Bytes())
	}
	return m, payloadErr(&r)
}

// ReadMeta reads a map directory's META: format, partition count, generation.
func ReadMeta(ctx context.Context, f fsbackend.FS) (partitions int, gen uint64, err error) {
	b, err := fsbackend.ReadFile(ctx, f, metaName)
	if err != nil {
		return 0, 0, err
	}
	m, err := decodeMeta(b)
	if err != nil {
		return 0, 0, fmt.Errorf("stowage/mapstore/filestore: %s: %w", metaName, err)
	}
	return int(m.Partitions), m.Gen, nil
}

// RecordedCodec implements mapstore.CodecRecorder: the codec name in
// META as it is in storage now.
func (s *Store) RecordedCodec(ctx context.Context) (string, error) {
	b, err := fsbackend.ReadFile(ctx, s.fs, metaName)
	if err != nil {
		return "", fmt.Errorf("stowage/mapstore/filestore: read %s: %w", metaName, err)
	}
	m, err := decodeMeta(b)
	if err != nil {
		return "", fmt.Errorf("stowage/mapstore/filestore: %s: %w", metaName, err)
	}
	return m.Codec, nil
}

// RecordCodec implements mapstore.CodecRecorder: META is rewritten with
// the name.
func (s *Store) RecordCodec(ctx context.Context, name string) error {
	b, err := fsbackend.ReadFile(ctx, s.fs, metaName)
	if err != nil {
		return fmt.Errorf("stowage/mapstore/filestore: read %s: %w", metaName, err)
	}
	m, err := decodeMeta(b)
	if err != nil {
		return fmt.Errorf("stowage/mapstore/filestore: %s: %w", metaName, err)
	}
	m.Codec = name
	if err := fsbackend.WriteFileAtomic(ctx, s.fs, metaName, s.run, encodeMeta(m)); err != nil {
		return fmt.Errorf("stowage/mapstore/filestore: write %s: %w", metaName, err)
	}
	return nil
}

func (s *Store) openMeta(ctx context.Context) (metaInfo, error) {
	b, err := fsbackend.ReadFile(ctx, s.fs, metaName)
	switch {
	case err == nil:
		m, derr := decodeMeta(b)
		if derr == nil {
			if m.Format != FormatVersion {
				return m, fmt.Errorf("stowage/mapstore/filestore: %s: format version %d is not supported (this program reads %d)", metaName, m.Format, FormatVersion)
			}
			if m.HashID != keyhash.ID {
				return m, fmt.Errorf("stowage/mapstore/filestore: %s: key hash %q is not supported (this program uses %q)", metaName, m.HashID, keyhash.ID)
			}
			return m, nil
		}
		s.damage(Damage{File: metaName, Length: int64(len(b)), Reason: derr.Error()})
	case errors.Is(err, fs.ErrNotExist):
	default:
		return metaInfo{}, fmt.Errorf("stowage/mapstore/filestore: read %s: %w", metaName, err)
	}
	// Missing or damaged META: rebuild it from the data files' headers.
	m, found, err := s.inferMeta(ctx)
	if err != nil {
		return m, err
	}
	if found {
		s.damage(Damage{File: metaName, Reason: fmt.Sprintf("missing or unreadable; rebuilt from data files (%d partitions, generation %d)", m.Partitions, m.Gen)})
	}
	if err := fsbackend.WriteFileAtomic(ctx, s.fs, metaName, s.run, encodeMeta(m)); err != nil {
		return m, fmt.Errorf("stowage/mapstore/filestore: write %s: %w", metaName, err)
	}
	return m, nil
}

// inferMeta derives META from the newest generation's file headers, or
// returns a fresh one for an empty directory.
func (s *Store) inferMeta(ctx context.Context) (metaInfo, bool, error) {
	m := metaInfo{Format: FormatVersion, Partitions: uint64(s.parts), Gen: 1, HashID: keyhash.ID}
	list, err := s.fs.List(ctx, "")
	if err != nil {
		return m, false, fmt.Errorf("stowage/mapstore/filestore: list: %w", err)
	}
	var best *fileHeader
	for _, fi := range list {
		if _, _, ok := parseName(fi.Name); !ok {
			continue
		}
		h, err := s.readHeader(ctx, fi.Name)
		if err != nil {
			continue
		}
		if best == nil || h.Gen > best.Gen {
			hh := h
			best = &hh
		}
	}
	if best == nil {
		return m, false, nil
	}
	m.Partitions, m.Gen = best.Partitions, best.Gen
	return m, true, nil
}

func (s *Store) readHeader(ctx context.Context, name string) (fileHeader, error) {
	r, err := s.fs.Open(ctx, name)
	if err != nil {
		return fileHeader{}, err
	}
	defer r.Close()
	n := min(r.Size(), 4096)
	buf := make([]byte, n)
	if _, err := r.ReadAt(buf, 0); err != nil && int64(len(buf)) != n {
		return fileHeader{}, err
	}
	f, _, err := record.Decode(buf)
	if err != nil {
		return fileHeader{}, err
	}
	if f.Type != typeLogHeader && f.Type != typeSnapHeader {
		return fileHeader{}, errPayload
	}
	pr := record.NewReader(f.Payload)
	h := decodeHeader(&pr)
	return h, payloadErr(&pr)
}

func (s *Store) damage(d Damage) {
	if d.Tail {
		s.log.Info("stowage/mapstore/filestore: cut torn tail", "file", d.File, "offset", d.Offset, "bytes", d.Length)
	} else {
		s.log.Warn("stowage/mapstore/filestore: skipped damaged data", "file", d.File, "offset", d.Offset, "bytes", d.Length, "reason", d.Reason)
	}
	if s.opts.OnDamage != nil {
		s.opts.OnDamage(d)
	}
}

// Partitions returns the partition count the store works with.
func (s *Store) Partitions() int { return s.parts }

// LastVersion returns the highest version the store holds for partition p,
// including deletes and epoch starts: the owner continues from it.
func (s *Store) LastVersion(p int) mapstore.Version {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last[p]
}

// SetLiveSizes implements mapstore.LiveSizer: the live check
// (livecheck.go) uses sizes rather than the snapshot source.
func (s *Store) SetLiveSizes(sizes mapstore.LiveSizes) {
	s.mu.Lock()
	s.sizes = sizes
	s.mu.Unlock()
}

// SetSnapshotSource implements mapstore.Snapshotter.
func (s *Store) SetSnapshotSource(src mapstore.SnapshotSource) {
	s.mu.Lock()
	s.source = src
	s.mu.Unlock()
}

// Close flushes queued writes, stops the compactor and the writer and
// closes the active segment. Calls after Close fail with mapstore.ErrClosed.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return mapstore.ErrClosed
	}
	s.closed = true
	s.mu.Unlock()
	s.stop()
	err := s.w.close()
	s.done.Wait()
	s.rr.close()
	if s.opts.Backend != nil {
		err = errors.Join(err, s.opts.Backend.Close())
	}
	return err
}

func (s *Store) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

var (
	_ mapstore.MapStore    = (*Store)(nil)
	_ mapstore.Snapshotter = (*Store)(nil)
)
