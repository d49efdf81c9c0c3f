// Package partition maps keys to partitions: partition id = xxHash64 of
// the serialized key, modulo the partition count (271 by default, as in
// Hazelcast). The hash is frozen; it is recorded as HashID in each map's
// META so that a change would be detected and keys re-hashed.
package partition

import "github.com/cespare/xxhash/v2"

// DefaultCount is Hazelcast's default partition count.
const DefaultCount = 271

// HashID names the key hash in stored metadata.
const HashID = "xxh64"

// Of returns the partition of a serialized key among count partitions.
func Of(key []byte, count int) int {
	return int(xxhash.Sum64(key) % uint64(count))
}
