// Package errorfs wraps an fsbackend.FS to inject faults, in the manner of
// pebble's errorfs: Wrap(fs, injector) consults the injector before each
// operation, and an injected failure is an error matching ErrInjected.
//
// Injectors compose (Any), can be armed and disarmed while a test runs
// (Switch), and cover: failing the Nth call of an operation (OnIndex),
// every call after N (After), calls on names with a prefix (OnPrefix),
// short writes (ShortWrite), torn files (TearAt: bytes past an offset are
// silently dropped, as a crash would lose them) and latency (Latency).
package errorfs
