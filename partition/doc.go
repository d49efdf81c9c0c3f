// Package partition maps keys to partitions: partition id = xxHash64 of
// the serialized key, modulo the partition count (271 by default, as in
// Hazelcast). The hash is frozen; it is recorded as HashID in each map's
// META so that a change would be detected and keys re-hashed.
package partition
