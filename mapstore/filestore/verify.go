package filestore

import (
	"context"
	"errors"
	"fmt"

	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/mapstore"
	"github.com/stowage/stowage/serde/record"
)

// Stats describes a map directory on storage.
type Stats struct {
	Partitions int    `json:"partitions"`
	Generation uint64 `json:"generation"`
	Entries    int64  `json:"entries"`
	LiveBytes  int64  `json:"live_bytes"`
	LogFiles   int    `json:"log_files"`
	LogBytes   int64  `json:"log_bytes"`
	Snapshots  int    `json:"snapshots"`
	SnapBytes  int64  `json:"snapshot_bytes"`
	OtherFiles int    `json:"other_files"`
	DiskBytes  int64  `json:"disk_bytes"`
}

// Stats reads the whole map directory and counts what is in it.
func (s *Store) Stats(ctx context.Context) (Stats, error) {
	st := Stats{Partitions: s.parts, Generation: s.gen}
	du, err := s.DiskUsage(ctx)
	if err != nil {
		return st, err
	}
	st.LogFiles, st.LogBytes, st.Snapshots, st.SnapBytes = du.LogFiles, du.LogBytes, du.Snapshots, du.SnapshotBytes
	st.OtherFiles, st.DiskBytes = du.OtherFiles, du.DiskBytes
	err = s.Entries(ctx, func(r mapstore.Record) error {
		st.Entries++
		st.LiveBytes += int64(len(r.Key) + len(r.Value))
		return nil
	})
	return st, err
}

// DiskUsage counts the map directory's files and bytes from a listing,
// reading none of them.
func (s *Store) DiskUsage(ctx context.Context) (mapstore.DiskUsage, error) {
	var du mapstore.DiskUsage
	list, err := s.fs.List(ctx, "")
	if err != nil {
		return du, err
	}
	for _, fi := range list {
		du.DiskBytes += fi.Size
		_, kind, ok := parseName(fi.Name)
		switch {
		case ok && kind == kindLog:
			du.LogFiles++
			du.LogBytes += fi.Size
		case ok && kind == kindSnap:
			du.Snapshots++
			du.SnapshotBytes += fi.Size
		default:
			du.OtherFiles++
		}
	}
	return du, nil
}

var _ mapstore.DiskUser = (*Store)(nil)

// Verify reads every file of the map directory in full and returns all
// damage found: unreadable frames in log files (torn tails are reported
// with Tail set), and snapshots that do not decode completely.
func (s *Store) Verify(ctx context.Context, progress func(done, total int)) ([]Damage, error) {
	list, err := s.fs.List(ctx, "")
	if err != nil {
		return nil, err
	}
	var out []Damage
	for i, fi := range list {
		if progress != nil {
			progress(i, len(list))
		}
		gen, kind, ok := parseName(fi.Name)
		if !ok {
			if fi.Name == metaName {
				b, err := fsbackend.ReadFile(ctx, s.fs, metaName)
				if err == nil {
					_, err = decodeMeta(b)
				}
				if err != nil {
					out = append(out, Damage{File: fi.Name, Reason: err.Error()})
				}
			}
			continue
		}
		if gen != s.gen {
			out = append(out, Damage{File: fi.Name, Reason: fmt.Sprintf("file of generation %d; the map is at generation %d", gen, s.gen)})
			continue
		}
		buf, err := fsbackend.ReadFile(ctx, s.fs, fi.Name)
		if err != nil {
			if errors.Is(err, fsbackend.ErrNotExist) {
				continue
			}
			return out, err
		}
		if kind == kindSnap {
			p, _, ok := parseSnapName(fi.Name)
			if !ok {
				out = append(out, Damage{File: fi.Name, Reason: "snapshot name does not parse"})
				continue
			}
			if _, err := checkSnapshot(buf, p, s.parts); err != nil {
				out = append(out, Damage{File: fi.Name, Length: int64(len(buf)), Reason: err.Error()})
			}
			continue
		}
		sc := record.NewScanner(buf)
		for sc.Next() {
			f := sc.Frame()
			if f.Type == typeLogHeader {
				continue
			}
			if f.Type == typeLink {
				if _, err := decodeLinks(f.Payload); err != nil {
					out = append(out, Damage{File: fi.Name, Offset: sc.Offset(), Reason: err.Error()})
				}
				continue
			}
			if _, err := decodeRecord(f); err != nil {
				out = append(out, Damage{File: fi.Name, Offset: sc.Offset(), Reason: err.Error()})
			}
		}
		for _, d := range sc.Damages() {
			out = append(out, Damage{File: fi.Name, Offset: d.Offset, Length: d.Length, Reason: d.Err.Error(), Tail: d.Tail})
		}
	}
	if progress != nil {
		progress(len(list), len(list))
	}
	return out, nil
}
