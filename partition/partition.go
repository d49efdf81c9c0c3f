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
