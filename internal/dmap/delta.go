package dmap

import "github.com/stowage/stowage/backup"

// The map side of a delta (package backup, delta.go): this member's copy
// of a partition summed up, and the entries of it a delta keeps.

// digest sums up this map's entries of partition p (nil when it has none).
func (c *heldMap) digest(p *fragment) *backup.Digest {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.entries) == 0 {
		return nil
	}
	s := backup.NewSummer(backup.BucketsFor(len(p.entries)))
	for k, e := range p.entries {
		s.Add(sumEntry(k, e))
	}
	d := s.Digest(c.name)
	return &d
}

// deltaKeep checks that this map's copy of partition p still sums to the
// base delta d was made against, and returns the entries d keeps.
func (c *heldMap) deltaKeep(p *fragment, d *backup.Delta) (map[string]entry, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := backup.NewSummer(d.Buckets)
	for k, e := range p.entries {
		s.Add(sumEntry(k, e))
	}
	if !s.Matches(d) {
		return nil, &backup.DeltaStaleError{Map: c.name}
	}
	keep := make(map[string]entry, len(p.entries))
	for k, e := range p.entries {
		if s.Keeps(d, []byte(k)) {
			keep[k] = e
		}
	}
	return keep, nil
}

// sumEntry is an entry as a digest sums it (as export sends it).
func sumEntry(k string, e entry) backup.Entry {
	return backup.Entry{K: []byte(k), V: e.val(), R: backup.VerOf(e.ver), X: e.exp}
}

// deltaKeeps runs deltaKeep for every map part of data that is a delta,
// before anything is installed: all of them fit, or none is installed.
func deltaKeeps(named map[string]*heldMap, data *backup.PartData) (map[string]map[string]entry, error) {
	var keeps map[string]map[string]entry
	for _, mp := range data.Maps {
		if mp.Delta == nil {
			continue
		}
		c := named[mp.Map]
		keep, err := c.deltaKeep(c.parts[data.P], mp.Delta)
		if err != nil {
			return nil, err
		}
		if keeps == nil {
			keeps = map[string]map[string]entry{}
		}
		keeps[mp.Map] = keep
	}
	return keeps, nil
}
