// Package bench measures stowage against references in the same run, since
// shared machines are noisy: every figure it reports is also given as a
// ratio to a reference measured moments before on the same disk.
//
//   - write-through puts/s (64 writers, 256 B values, fsync'd) against a raw
//     group-committed append+fdatasync of the same bytes (the physical
//     limit) and against bbolt (Batch, and one put per transaction);
//   - EAGER load of N entries against a raw sequential read + CRC-32C of the
//     same files;
//   - disk bytes / live bytes after overwriting every key 10 times.
//
// `stowage bench` runs them and prints a table; bench/README.md records one
// run with its machine and command.
package bench
