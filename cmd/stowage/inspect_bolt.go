package main

import (
	"context"
	"fmt"
	"io"

	"github.com/stowage/stowage"
	"github.com/stowage/stowage/mapstore"
	"github.com/stowage/stowage/mapstore/boltstore"
)

// boltCommand runs an inspect subcommand on the bbolt file of a map-store
// of type bbolt. The file is opened read-only (bbolt's shared lock): a
// member that has it open makes the command fail after a second.
func (in *inspector) boltCommand(ctx context.Context, rest []string) error {
	switch {
	case rest[0] == "maps" && len(rest) == 1:
		return in.boltMaps(ctx)
	case rest[0] == "stats" && len(rest) == 2:
		return in.boltStats(ctx, rest[1])
	case rest[0] == "dump" && len(rest) == 2:
		return in.boltDump(ctx, rest[1])
	case rest[0] == "get" && len(rest) == 3:
		return in.boltGet(ctx, rest[1], rest[2])
	case rest[0] == "verify" && len(rest) == 1:
		return in.boltVerify(ctx)
	case rest[0] == "compact" && len(rest) == 2:
		return in.boltCompact(rest[1])
	}
	return errUsage
}

func (in *inspector) boltMaps(ctx context.Context) error {
	st, _, err := in.openStorage(ctx, nil, true)
	if err != nil {
		return err
	}
	if st.names == nil {
		st.names = []string{}
	}
	in.printNames(st.names)
	return nil
}

// openBolt opens one map of the bbolt file read-only, collecting what
// LoadPartition skips as damaged into *damaged.
func (in *inspector) openBolt(name string, damaged *[]boltstore.Damage) (*boltstore.Store, error) {
	if err := stowage.ValidMapName(name); err != nil {
		return nil, err
	}
	s, err := boltstore.OpenReadOnly(in.boltPath, boltstore.Options{MapName: name, OnDamage: func(d boltstore.Damage) {
		if damaged != nil {
			*damaged = append(*damaged, d)
		}
	}})
	if err != nil {
		return nil, fmt.Errorf("map %q: %w", name, err)
	}
	return s, nil
}

func (in *inspector) reportBoltDamage(ds []boltstore.Damage) {
	for _, d := range ds {
		fmt.Fprintf(in.errw, "stowage inspect: %s\n", d)
	}
}

func (in *inspector) boltStats(ctx context.Context, name string) error {
	var damaged []boltstore.Damage
	s, err := in.openBolt(name, &damaged)
	if err != nil {
		return err
	}
	defer s.Close()
	bar := in.newBar("stats " + name)
	st, err := s.Stats(ctx, bar.progress())
	bar.clear()
	if err != nil {
		return err
	}
	in.reportBoltDamage(damaged)
	in.print(struct {
		Map   string `json:"map"`
		Store string `json:"store"`
		boltstore.Stats
	}{name, "bbolt", st}, func(w io.Writer) {
		fmt.Fprintf(w, "map:          %s\nstore:        bbolt %s\npartitions:   %d\nentries:      %d\nlive bytes:   %d\ndamaged:      %d entries\nfile bytes:   %d (every map of the file)\n",
			name, st.Path, st.Partitions, st.Entries, st.LiveBytes, st.Damaged, st.FileBytes)
	})
	return nil
}

func (in *inspector) boltDump(ctx context.Context, name string) error {
	var damaged []boltstore.Damage
	s, err := in.openBolt(name, &damaged)
	if err != nil {
		return err
	}
	defer s.Close()
	bar := in.newBar("dump " + name)
	entries := []dumpEntry{}
	for part := 0; part < s.Partitions(); part++ {
		bar.set(part, s.Partitions())
		err := s.LoadPartition(ctx, part, func(r mapstore.Record) error {
			entries = append(entries, dumpEntry{printable(r.Key), printable(r.Value), r.Partition, r.Version.Epoch, r.Version.Seq})
			return nil
		})
		if err != nil {
			bar.clear()
			return err
		}
	}
	bar.set(s.Partitions(), s.Partitions())
	in.printEntries(entries)
	in.reportBoltDamage(damaged)
	return nil
}

func (in *inspector) boltGet(ctx context.Context, name, key string) error {
	s, err := in.openBolt(name, nil)
	if err != nil {
		return err
	}
	defer s.Close()
	r, ok, err := s.Load(ctx, []byte(key))
	if err != nil {
		return err
	}
	return in.printGot(name, key, r, ok)
}

// boltVerify checks every map of the file (bbolt's page check, and every
// entry); any damage makes the command exit 1.
func (in *inspector) boltVerify(ctx context.Context) error {
	st, _, err := in.openStorage(ctx, nil, true)
	if err != nil {
		return err
	}
	if st.names == nil {
		return fmt.Errorf("bbolt file %s: no maps (no such file, or no stowage map in it)", in.boltPath)
	}
	reports := []verifyReport[string]{}
	bad := 0
	for _, name := range st.names {
		s, err := in.openBolt(name, nil)
		if err != nil {
			return err
		}
		ds, err := s.Verify(ctx, in.bar("verify "+name))
		s.Close()
		if err != nil {
			return err
		}
		r := verifyReport[string]{Map: name, Damages: []string{}}
		for _, d := range ds {
			r.Damages = append(r.Damages, d.String())
		}
		bad += len(ds)
		reports = append(reports, r)
	}
	return printVerified(in, reports, bad)
}

// noCompaction says why compact does nothing on bbolt.
const noCompaction = "not needed for bbolt: it keeps no log, each entry is updated in place and deleted entries are removed, so the file holds only live entries plus the free pages bbolt reuses"

func (in *inspector) boltCompact(name string) error {
	s, err := in.openBolt(name, nil)
	if err != nil {
		return err
	}
	s.Close()
	in.print(map[string]any{"map": name, "store": "bbolt", "compacted": false, "reason": noCompaction}, func(w io.Writer) {
		fmt.Fprintf(w, "%s: compact: %s\n", name, noCompaction)
	})
	return nil
}
