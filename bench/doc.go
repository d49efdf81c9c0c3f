// Package bench measures stowage against references in the same run, since
// shared machines are noisy: every figure it reports is also given as a
// ratio to a reference measured moments before on the same disk.
//
//   - write-through puts/s (64 writers, 256 B values, fsync'd) against a raw
//     group-committed append+fdatasync of the same bytes (the physical
//     limit), in interleaved rounds (WriteRounds), and against bbolt
//     (Batch, and one put per transaction);
//   - EAGER load of N entries against a raw read + CRC-32C of the same
//     files that keeps the bytes, as a load does, in interleaved rounds
//     (LoadRounds; also the read that drops them, and one on every core);
//   - disk bytes / live bytes after overwriting every key 10 times.
//
// `stowage bench` runs them and prints a table; it also measures a cluster
// of member processes on loopback (puts/s of 3 members with backup-count 1
// against one member, and fail-over time after a SIGKILL), which lives in
// cmd/stowage because it starts `stowage node` processes. bench/README.md
// records runs with their machine and command.
package bench
