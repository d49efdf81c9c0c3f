package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"sort"
	"strings"

	"github.com/stowage/stowage"
	"github.com/stowage/stowage/config"
	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/mapstore"
	"github.com/stowage/stowage/mapstore/boltstore"
	"github.com/stowage/stowage/mapstore/filestore"
	"github.com/stowage/stowage/partition"
)

// inspector works on storage alone: no member needs to run (and none
// should write while it does).
type inspector struct {
	props    fsbackend.Properties
	base     string // namespace/clusterName
	boltPath string // the bbolt file of a map-store of type bbolt, instead of props
	cfg      *config.Config
	json     bool
	force    bool // compact even when damage was found
	out      io.Writer
	errw     io.Writer
	damages  []filestore.Damage
}

// forceUsage is the help of compact's --force, given before or after
// the subcommand.
const forceUsage = "compact even though damage was found (the damaged records are then lost for good)"

type propFlags []string

func (p *propFlags) String() string     { return strings.Join(*p, ",") }
func (p *propFlags) Set(v string) error { *p = append(*p, v); return nil }

func runInspect(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fl := flag.NewFlagSet("inspect", flag.ContinueOnError)
	fl.SetOutput(stderr)
	cfgDir := fl.String("config-dir", "", "SeaTunnel config directory: storage of the first enabled map-store, and checkpoint storage")
	fsURI := fl.String("fs", "", "storage URI: file:///, hdfs://host:port, s3a://bucket, oss://bucket, cosn://bucket, gs://bucket")
	ns := fl.String("namespace", "", "IMap namespace, e.g. /tmp/seatunnel/imap")
	cluster := fl.String("cluster", "", "cluster name (the map-store clusterName)")
	boltPath := fl.String("bbolt", "", "a bbolt map-store file (map-store type bbolt), instead of --fs")
	asJSON := fl.Bool("json", false, "print JSON for machines")
	force := fl.Bool("force", false, "compact: "+forceUsage)
	var props propFlags
	fl.Var(&props, "property", "extra storage property KEY=VALUE (repeatable), e.g. fs.s3a.endpoint=http://127.0.0.1:9000")
	if err := fl.Parse(args); err != nil {
		return err
	}
	in := &inspector{json: *asJSON, force: *force, out: stdout, errw: stderr, boltPath: *boltPath}
	switch {
	case *cfgDir != "":
		cfg, err := config.Load(*cfgDir)
		if err != nil {
			return err
		}
		in.cfg = cfg
		for _, mc := range cfg.Hazelcast.Maps {
			if mc.MapStore == nil || !mc.MapStore.Enabled {
				continue
			}
			switch t := mc.MapStore.StoreType(); t {
			case config.StoreHDFS:
				in.props = mc.MapStore.Properties
				*ns = in.props.Get("namespace", *ns)
				*cluster = in.props.Get("clusterName", *cluster)
			case config.StoreBBolt:
				in.boltPath = mc.MapStore.Properties.Get("path", "")
				if in.boltPath == "" {
					return fmt.Errorf("hazelcast.map.%s.map-store: type bbolt needs properties.path (the bbolt file)", mc.Pattern)
				}
			default:
				return fmt.Errorf("hazelcast.map.%s.map-store: type %q: inspect reads map stores of type hdfs (the file map store, on any storage.type) and bbolt", mc.Pattern, t)
			}
			break
		}
	case *fsURI != "":
		p, err := propsFromURI(*fsURI)
		if err != nil {
			return err
		}
		in.props = p
	}
	for _, kv := range props {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return fmt.Errorf("--property %q: want KEY=VALUE", kv)
		}
		if in.props == nil {
			in.props = fsbackend.Properties{}
		}
		in.props[k] = v
	}
	rest := fl.Args()
	if len(rest) == 0 {
		return errUsage
	}
	if rest[0] == "checkpoints" {
		return in.checkpoints(ctx, rest[1:], *ns)
	}
	if rest[0] == "compact" && len(rest) > 1 {
		cf := flag.NewFlagSet("compact", flag.ContinueOnError)
		cf.SetOutput(stderr)
		cf.BoolVar(&in.force, "force", in.force, forceUsage)
		if err := cf.Parse(rest[1:]); err != nil {
			return err
		}
		rest = append([]string{"compact"}, cf.Args()...)
	}
	if in.boltPath != "" {
		return in.boltCommand(ctx, rest)
	}
	if in.props == nil || *ns == "" || *cluster == "" {
		if in.cfg != nil {
			return fmt.Errorf("--config-dir %s: no enabled map-store of type hdfs with namespace and clusterName, nor of type bbolt, in hazelcast.yaml", *cfgDir)
		}
		return errors.New("give --config-dir, or --fs with --namespace and --cluster, or --bbolt FILE")
	}
	in.base = fsbackend.Join(strings.TrimPrefix(*ns, "/"), *cluster)
	switch {
	case rest[0] == "maps" && len(rest) == 1:
		return in.maps(ctx)
	case rest[0] == "stats" && len(rest) == 2:
		return in.stats(ctx, rest[1])
	case rest[0] == "dump" && len(rest) == 2:
		return in.dump(ctx, rest[1])
	case rest[0] == "get" && len(rest) == 3:
		return in.get(ctx, rest[1], rest[2])
	case rest[0] == "verify" && len(rest) == 1:
		return in.verify(ctx)
	case rest[0] == "compact" && len(rest) == 2:
		return in.compact(ctx, rest[1])
	}
	return errUsage
}

// propsFromURI turns --fs into SeaTunnel storage properties.
func propsFromURI(uri string) (fsbackend.Properties, error) {
	u, err := url.Parse(uri)
	if err != nil {
		return nil, fmt.Errorf("--fs %q: %w", uri, err)
	}
	switch u.Scheme {
	case "file", "":
		return fsbackend.Properties{"storage.type": "hdfs", "fs.defaultFS": "file:///"}, nil
	case "hdfs":
		return fsbackend.Properties{"storage.type": "hdfs", "fs.defaultFS": uri}, nil
	case "s3a", "s3", "s3n":
		return fsbackend.Properties{"storage.type": "s3", "s3.bucket": uri}, nil
	case "oss":
		return fsbackend.Properties{"storage.type": "oss", "oss.bucket": uri}, nil
	case "cosn":
		return fsbackend.Properties{"storage.type": "cos", "cos.bucket": uri}, nil
	case "gs":
		return fsbackend.Properties{"storage.type": "gcs", "gcs.bucket": uri}, nil
	}
	return nil, fmt.Errorf("--fs %q: unknown scheme %q (file, hdfs, s3a, oss, cosn, gs)", uri, u.Scheme)
}

// storage is the storage an inspect subcommand reads, opened, and the
// maps listed in it.
type storage struct {
	fs    fsbackend.FS // nil for a bbolt file, which boltstore opens per call
	names []string     // the maps, sorted, if listed
}

// openStorage is the prologue of every inspect subcommand. It opens the
// storage of props (the map store's or the checkpoints') and, if
// listMaps, lists the maps below in.base in it. With props nil it reads
// the maps' bbolt file (--bbolt or a map-store of type bbolt): there is
// nothing to open, and the listing is the maps in the file. done closes
// what was opened.
func (in *inspector) openStorage(ctx context.Context, props fsbackend.Properties, listMaps bool) (st storage, done func(), err error) {
	if props == nil {
		if listMaps {
			st.names, err = boltstore.Maps(in.boltPath, 0)
		}
		return st, func() {}, err
	}
	if st.fs, err = fsbackend.Open(ctx, props); err != nil {
		return storage{}, nil, err
	}
	if listMaps {
		if st.names, err = in.mapNames(ctx, st.fs); err != nil {
			st.fs.Close()
			return storage{}, nil, err
		}
	}
	return st, func() { st.fs.Close() }, nil
}

func (in *inspector) print(v any, text func(w io.Writer)) {
	if in.json {
		enc := json.NewEncoder(in.out)
		enc.SetIndent("", "  ")
		_ = enc.Encode(v)
		return
	}
	text(in.out)
}

func (in *inspector) mapNames(ctx context.Context, f fsbackend.FS) ([]string, error) {
	list, err := f.List(ctx, in.base)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []string
	for _, fi := range list {
		name, file, ok := strings.Cut(strings.TrimPrefix(fi.Name, in.base+"/"), "/")
		if ok && !seen[name] && (file == "META" || strings.HasPrefix(file, "g")) {
			seen[name] = true
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out, nil
}

// withMap opens the storage and one map on it; done closes both.
func (in *inspector) withMap(ctx context.Context, name string) (*filestore.Store, func(), error) {
	st, closeFS, err := in.openStorage(ctx, in.props, false)
	if err != nil {
		return nil, nil, err
	}
	s, err := in.openMap(ctx, st.fs, name)
	if err != nil {
		closeFS()
		return nil, nil, err
	}
	return s, func() { s.Close(); closeFS() }, nil
}

// openMap opens one map directory with the file map store.
func (in *inspector) openMap(ctx context.Context, f fsbackend.FS, name string) (*filestore.Store, error) {
	if err := stowage.ValidMapName(name); err != nil {
		return nil, err
	}
	sub, err := fsbackend.Sub(f, fsbackend.Join(in.base, name))
	if err != nil {
		return nil, err
	}
	if _, err := sub.Stat(ctx, "META"); err != nil {
		if list, _ := sub.List(ctx, ""); len(list) == 0 {
			return nil, fmt.Errorf("map %q: no such map under %s", name, in.base)
		}
	}
	parts, _, err := filestore.ReadMeta(ctx, sub)
	if err != nil {
		parts = partition.DefaultCount
	}
	return filestore.Open(ctx, filestore.Options{FS: sub, Partitions: parts,
		Logger:   quietLogger(),
		OnDamage: func(d filestore.Damage) { in.damages = append(in.damages, d) }})
}

func (in *inspector) maps(ctx context.Context) error {
	st, done, err := in.openStorage(ctx, in.props, true)
	if err != nil {
		return err
	}
	defer done()
	in.printNames(st.names)
	return nil
}

// printNames prints map names, one a line.
func (in *inspector) printNames(names []string) {
	in.print(names, func(w io.Writer) {
		for _, n := range names {
			fmt.Fprintln(w, n)
		}
	})
}

func (in *inspector) stats(ctx context.Context, name string) error {
	ctx, clear := in.scan(ctx, "stats "+name)
	defer clear()
	s, done, err := in.withMap(ctx, name)
	if err != nil {
		return err
	}
	defer done()
	st, err := s.Stats(ctx)
	if err != nil {
		return err
	}
	ratio := 0.0
	if st.LiveBytes > 0 {
		ratio = float64(st.DiskBytes) / float64(st.LiveBytes)
	}
	in.print(struct {
		Map string `json:"map"`
		filestore.Stats
		DiskPerLive float64 `json:"disk_per_live"`
	}{name, st, ratio}, func(w io.Writer) {
		fmt.Fprintf(w, "map:          %s\npartitions:   %d (generation %d)\nentries:      %d\nlive bytes:   %d\nlog:          %d files, %d bytes\nsnapshots:    %d files, %d bytes\ndisk bytes:   %d (%.2fx live)\n",
			name, st.Partitions, st.Generation, st.Entries, st.LiveBytes, st.LogFiles, st.LogBytes, st.Snapshots, st.SnapBytes, st.DiskBytes, ratio)
	})
	return nil
}

func printable(b []byte) string {
	for _, c := range b {
		if c < 0x20 || c > 0x7e {
			return fmt.Sprintf("0x%x", b)
		}
	}
	return string(b)
}

type dumpEntry struct {
	Key       string `json:"key"`
	Value     string `json:"value"`
	Partition int    `json:"partition"`
	Epoch     uint64 `json:"epoch"`
	Seq       uint64 `json:"seq"`
}

func (in *inspector) dump(ctx context.Context, name string) error {
	ctx, clear := in.scan(ctx, "dump "+name)
	defer clear()
	s, done, err := in.withMap(ctx, name)
	if err != nil {
		return err
	}
	defer done()
	var entries []dumpEntry
	err = s.Entries(ctx, func(r mapstore.Record) error {
		entries = append(entries, dumpEntry{printable(r.Key), printable(r.Value), r.Partition, r.Version.Epoch, r.Version.Seq})
		return nil
	})
	if err != nil {
		return err
	}
	clear()
	in.printEntries(entries)
	return in.reportDamage()
}

// printEntries prints entries sorted by key.
func (in *inspector) printEntries(entries []dumpEntry) {
	sort.Slice(entries, func(i, j int) bool { return entries[i].Key < entries[j].Key })
	in.print(entries, func(w io.Writer) {
		for _, e := range entries {
			fmt.Fprintf(w, "%s\t%s\t(partition %d, epoch %d, seq %d)\n", e.Key, e.Value, e.Partition, e.Epoch, e.Seq)
		}
	})
}

func (in *inspector) get(ctx context.Context, name, key string) error {
	ctx, clear := in.scan(ctx, "get "+name)
	defer clear()
	s, done, err := in.withMap(ctx, name)
	if err != nil {
		return err
	}
	defer done()
	r, ok, err := s.Load(ctx, []byte(key))
	if err != nil {
		return err
	}
	clear()
	return in.printGot(name, key, r, ok)
}

// printGot prints the value of key that Load found (ok), or says that
// map name has no such key and exits 1.
func (in *inspector) printGot(name, key string, r mapstore.Record, ok bool) error {
	if !ok {
		fmt.Fprintf(in.errw, "stowage inspect: map %q has no key %q\n", name, key)
		return exitError(1)
	}
	in.print(dumpEntry{key, printable(r.Value), r.Partition, r.Version.Epoch, r.Version.Seq}, func(w io.Writer) {
		fmt.Fprintln(w, printable(r.Value))
	})
	return nil
}

// verifyReport is what verify found in one map: filestore.Damage, or for
// bbolt each damage's text.
type verifyReport[D any] struct {
	Map     string `json:"map"`
	Damages []D    `json:"damages"`
}

// printVerified prints the reports of verify; bad damaged places make it
// exit 1.
func printVerified[D any](in *inspector, reports []verifyReport[D], bad int) error {
	in.print(reports, func(w io.Writer) {
		for _, r := range reports {
			if len(r.Damages) == 0 {
				fmt.Fprintf(w, "%s: ok\n", r.Map)
				continue
			}
			for _, d := range r.Damages {
				fmt.Fprintf(w, "%s: %v\n", r.Map, d)
			}
		}
		fmt.Fprintf(w, "%d maps verified, %d damaged places\n", len(reports), bad)
	})
	if bad > 0 {
		return exitError(1)
	}
	return nil
}

// verify reads every file of every map; damage other than a torn tail
// makes the command exit 1.
func (in *inspector) verify(ctx context.Context) error {
	st, done, err := in.openStorage(ctx, in.props, true)
	if err != nil {
		return err
	}
	defer done()
	var reports []verifyReport[filestore.Damage]
	bad := 0
	for _, name := range st.names {
		s, err := in.openMap(ctx, st.fs, name)
		if err != nil {
			return err
		}
		ds, err := s.Verify(ctx, in.bar("verify "+name))
		s.Close()
		if err != nil {
			return err
		}
		ds = append(in.damages, ds...)
		in.damages = nil
		ds = dedupe(ds)
		for _, d := range ds {
			if !d.Tail {
				bad++
			}
		}
		reports = append(reports, verifyReport[filestore.Damage]{Map: name, Damages: ds})
	}
	return printVerified(in, reports, bad)
}

func dedupe(ds []filestore.Damage) []filestore.Damage {
	seen := map[string]bool{}
	var out []filestore.Damage
	for _, d := range ds {
		k := fmt.Sprintf("%s@%d", d.File, d.Offset)
		if !seen[k] {
			seen[k] = true
			out = append(out, d)
		}
	}
	return out
}

func (in *inspector) reportDamage() error {
	ds := dedupe(in.damages)
	for _, d := range ds {
		fmt.Fprintf(in.errw, "stowage inspect: %s\n", d)
	}
	return nil
}

// compact loads a map into memory, snapshots every partition and deletes
// the log files and snapshots the new snapshots cover. It first reads
// every file of the map, as verify does, and refuses (exit 1) if it finds
// damage that compaction would make permanent by deleting the file it is
// in, unless --force is given. Torn tails (the end of a batch a member
// was writing when it died; never acknowledged) and a rebuilt META do not
// stop it; they are reported all the same.
func (in *inspector) compact(ctx context.Context, name string) error {
	ctx, clear := in.scan(ctx, "compact "+name)
	defer clear()
	s, done, err := in.withMap(ctx, name)
	if err != nil {
		return err
	}
	defer done()
	found, err := s.Verify(ctx, nil)
	if err != nil {
		return err
	}
	damages := dedupe(append(in.damages, found...))
	in.damages = nil
	var lost []filestore.Damage
	for _, d := range damages {
		if !d.Tail && d.File != "META" {
			lost = append(lost, d)
		}
	}
	if len(lost) > 0 && !in.force {
		clear()
		for _, d := range damages {
			fmt.Fprintf(in.errw, "stowage inspect: %s\n", d)
		}
		fmt.Fprintf(in.errw, "stowage inspect: compact %s: refused: compaction would delete the files holding %d damaged places, and what is left of the damaged records with them:\n", name, len(lost))
		for _, d := range lost {
			fmt.Fprintf(in.errw, "  %s at offset %d (%d bytes)\n", d.File, d.Offset, d.Length)
		}
		fmt.Fprintf(in.errw, "stowage inspect: keep a copy of those files if they may be repaired, then give --force to compact anyway\n")
		in.print(map[string]any{"map": name, "refused": true, "damages": damages, "lost": lost}, func(io.Writer) {})
		return exitError(1)
	}
	before, err := s.Stats(ctx)
	if err != nil {
		return err
	}
	if err := s.CompactOffline(ctx); err != nil {
		return err
	}
	after, err := s.Stats(ctx)
	if err != nil {
		return err
	}
	clear()
	for _, d := range damages {
		fmt.Fprintf(in.errw, "stowage inspect: %s\n", d)
	}
	if len(lost) > 0 {
		fmt.Fprintf(in.errw, "stowage inspect: compact %s: --force: the damaged records in %d places are now lost for good\n", name, len(lost))
	}
	if damages == nil {
		damages = []filestore.Damage{}
	}
	in.print(map[string]any{"map": name, "before": before, "after": after, "damages": damages, "lost": lost}, func(w io.Writer) {
		fmt.Fprintf(w, "%s: %d entries; disk %d -> %d bytes; log files %d -> %d; snapshots %d -> %d\n",
			name, after.Entries, before.DiskBytes, after.DiskBytes, before.LogFiles, after.LogFiles, before.Snapshots, after.Snapshots)
	})
	return nil
}
