package backup

import (
	"encoding/binary"
	"math/bits"
	"slices"

	"github.com/cespare/xxhash/v2"
)

// A delta: a member that already holds a copy of a partition (a backup
// that was cut off a while and comes back, a former replica, a backup
// made owner by a migration) gets only the part of the data that differs
// from its copy, whatever happened to the data meanwhile (writes,
// deletes, reverts, new epochs). The copy is summed up per map as a
// Digest: the entries spread over buckets by key, each bucket the sum of
// its entries' hashes (key, value, version, expiry). The sender compares
// its own buckets with those and sends the entries of the buckets that
// differ (MapPart.Delta); the receiver keeps its entries of the other
// buckets, once it checked, while it installs, that its copy still sums
// to the digest it gave (Delta.Base). A delta therefore installs exactly
// the sender's entries, as a whole copy would; only the bytes on the wire
// differ. The map's versions (Ver, Applied, Above) always come whole.

// Digest sums up one map's entries of a partition, as the receiver of a
// delta holds them.
type Digest struct {
	Map string `msgpack:"m"`
	// Sums holds two words per bucket; the bucket count is a power of two.
	Sums []uint64 `msgpack:"s"`
}

// Delta says that a MapPart's Entries are those of some buckets only.
type Delta struct {
	// Buckets is the digest's bucket count; Base the fingerprint of the
	// receiver's digest the delta was made against.
	Buckets int    `msgpack:"n"`
	Base    uint64 `msgpack:"b"`
	// Redo lists the buckets whose entries are Entries; the receiver's
	// entries of every other bucket are the sender's.
	Redo []uint32 `msgpack:"r"`
}

// maxBuckets bounds a digest: 16 bytes a bucket, 4 MiB at most.
const maxBuckets = 1 << 18

// BucketsFor is the bucket count of a digest of entries entries: one for
// every two entries or so, so that a changed key costs the sender about
// two entries and the digest, sent the other way, eight bytes an entry
// (less than any entry's key and version). Past half a million entries
// in one map's partition, buckets hold more.
func BucketsFor(entries int) int {
	n := 1
	for n < maxBuckets && n*2 < entries {
		n <<= 1
	}
	return n
}

// Summer adds entries up into a digest of a fixed bucket count.
type Summer struct {
	shift uint
	sums  []uint64
}

// NewSummer returns a summer of n buckets (a power of two up to
// maxBuckets; anything else is rounded to one).
func NewSummer(n int) *Summer {
	if n < 1 || n > maxBuckets || n&(n-1) != 0 {
		n = 1
	}
	return &Summer{shift: uint(64 - bits.TrailingZeros(uint(n))), sums: make([]uint64, 2*n)}
}

// bucket is key's bucket among the summer's.
func (s *Summer) bucket(key []byte) int {
	if len(s.sums) == 2 {
		return 0
	}
	// The keys of one partition share their hash modulo the partition
	// count; the high bits of a multiple spread them.
	return int((xxhash.Sum64(key) * 0x9e3779b97f4a7c15) >> s.shift)
}

// Add adds e to its bucket.
func (s *Summer) Add(e Entry) {
	var hdr [48]byte
	binary.LittleEndian.PutUint64(hdr[0:], uint64(len(e.K)))
	binary.LittleEndian.PutUint64(hdr[8:], e.R.E)
	binary.LittleEndian.PutUint64(hdr[16:], e.R.S)
	binary.LittleEndian.PutUint64(hdr[24:], uint64(e.X))
	binary.LittleEndian.PutUint64(hdr[32:], xxhash.Sum64(e.V))
	binary.LittleEndian.PutUint64(hdr[40:], uint64(len(e.V)))
	if e.D {
		hdr[0] ^= 0x80 // lengths never reach 2^63
	}
	d := xxhash.New()
	_, _ = d.Write(hdr[:])
	_, _ = d.Write(e.K)
	a := d.Sum64()
	_, _ = d.Write([]byte{0xa5})
	b := d.Sum64()
	i := 2 * s.bucket(e.K)
	s.sums[i] += a
	s.sums[i+1] += b
}

// Digest is what was added, as map name's digest.
func (s *Summer) Digest(name string) Digest { return Digest{Map: name, Sums: slices.Clone(s.sums)} }

// Matches reports whether what was added sums to the digest a delta was
// made against (and the delta's buckets are in order and in range).
func (s *Summer) Matches(d *Delta) bool {
	if d == nil || d.Buckets != len(s.sums)/2 || fingerprint(s.sums) != d.Base {
		return false
	}
	for i, b := range d.Redo {
		if int(b) >= d.Buckets || i > 0 && b <= d.Redo[i-1] {
			return false
		}
	}
	return true
}

// Keeps reports whether the receiver of delta d keeps its own entry of
// key (its bucket is not redone). s must have d's bucket count.
func (s *Summer) Keeps(d *Delta, key []byte) bool {
	_, redo := slices.BinarySearch(d.Redo, uint32(s.bucket(key)))
	return !redo
}

func fingerprint(sums []uint64) uint64 {
	b := make([]byte, 8*len(sums))
	for i, v := range sums {
		binary.LittleEndian.PutUint64(b[8*i:], v)
	}
	return xxhash.Sum64(b)
}

// DigestOf sums up mp's entries in n buckets.
func DigestOf(mp *MapPart, n int) Digest {
	s := NewSummer(n)
	for _, e := range mp.Entries {
		s.Add(e)
	}
	return s.Digest(mp.Map)
}

// deltaOf cuts full down to the buckets whose sums differ from d's. ok is
// false when d does not fit (bucket count) or nothing would be saved:
// full is then sent whole.
func deltaOf(full MapPart, d Digest) (MapPart, bool) {
	n := len(d.Sums) / 2
	if n < 1 || n > maxBuckets || n&(n-1) != 0 || len(d.Sums) != 2*n {
		return full, false
	}
	s := NewSummer(n)
	for _, e := range full.Entries {
		s.Add(e)
	}
	var redo []uint32
	for b := range n {
		if s.sums[2*b] != d.Sums[2*b] || s.sums[2*b+1] != d.Sums[2*b+1] {
			redo = append(redo, uint32(b))
		}
	}
	if len(redo) == n {
		return full, false
	}
	out := full
	out.Delta = &Delta{Buckets: n, Base: fingerprint(d.Sums), Redo: redo}
	out.Entries = nil
	for _, e := range full.Entries {
		if !s.Keeps(out.Delta, e.K) {
			out.Entries = append(out.Entries, e)
		}
	}
	return out, true
}

// deltaData cuts each map of pd down against the receiver's digests
// (ds); maps the receiver has no digest for go whole. It reports how many
// entries were left out.
func deltaData(pd PartData, ds []Digest) (PartData, int) {
	if len(ds) == 0 {
		return pd, 0
	}
	byMap := make(map[string]Digest, len(ds))
	for _, d := range ds {
		byMap[d.Map] = d
	}
	out := PartData{P: pd.P, Maps: make([]MapPart, len(pd.Maps))}
	saved := 0
	for i, mp := range pd.Maps {
		out.Maps[i] = mp
		if d, ok := byMap[mp.Map]; ok {
			if dm, ok := deltaOf(mp, d); ok {
				out.Maps[i] = dm
				saved += len(mp.Entries) - len(dm.Entries)
			}
		}
	}
	return out, saved
}

// DeltaStaleError is what a holder's install returns when a delta's
// receiver no longer holds the copy the delta was made against: the data
// must come whole.
type DeltaStaleError struct{ Map string }

func (e *DeltaStaleError) Error() string {
	return "stowage: map " + e.Map + ": the copy here changed since its digest; send it whole"
}
