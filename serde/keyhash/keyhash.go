// Package keyhash is the hash that places a serialized key in a
// partition: xxHash64 of the key's bytes, modulo the partition count. It
// is part of the storage format (each map store records ID), so it lives
// below every package that stores or routes keys; package partition
// presents it as partition.Of.
package keyhash

import "github.com/cespare/xxhash/v2"

// DefaultPartitions is Hazelcast's default partition count.
const DefaultPartitions = 271

// ID names the key hash in stored metadata. The hash is frozen: a new
// one needs a new ID, so that stored maps are detected and re-hashed.
const ID = "xxh64"

// Partition returns the partition of a serialized key among count
// partitions.
func Partition(key []byte, count int) int {
	return int(xxhash.Sum64(key) % uint64(count))
}
