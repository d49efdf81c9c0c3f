package partition

import "github.com/stowage/stowage/serde/keyhash"

// DefaultCount is Hazelcast's default partition count.
const DefaultCount = keyhash.DefaultPartitions

// HashID names the key hash in stored metadata.
const HashID = keyhash.ID

// Of returns the partition of a serialized key among count partitions.
func Of(key []byte, count int) int { return keyhash.Partition(key, count) }
