// Package errorfs wraps an fsbackend.FS to inject faults, in the manner of
// pebble's errorfs: Wrap(fs, injector) consults the injector before each
// operation, and an injected failure is an error matching ErrInjected.
//
// Injectors are small and compose:
//
//   - Fail fails every call it sees; OnIndex(op, n) fails the n-th call
//     of op (0-based) once and After(op, n) every call of op from the n-th
//     on; Nth and FromNth apply any injector to those calls only.
//   - OnPrefix and OnName restrict an injector to names with a prefix or
//     accepted by a predicate, OnOps to some operations.
//   - ShortWrite writes only the first k bytes of a Write and fails it;
//     TearAt silently drops every byte written past an offset of a file,
//     so the writer sees success and the file ends at that offset — the
//     torn tail a crash leaves. Combine it with memfs's Crash.
//   - Latency delays calls; the delay ends early with the context's error
//     when the call's context is done.
//   - Any applies several injectors to each call: all of them see it (so
//     their counters advance alike), delays add up, the first error wins
//     and write shaping takes the most restrictive.
//   - A Switch arms and disarms an injector at run time, atomically, so a
//     test can let a workload start cleanly and fail it mid-run.
//
// Counters of OnIndex, After, Nth and FromNth count only the calls that
// reach them: inside OnPrefix("log/", OnIndex(OpWrite, 2)) the index is
// that of writes to files under log/.
//
// The wrapper reports to the injector the operations listed as Op
// constants. Writer and Reader calls carry the name of their file and use
// the context given to Create or Open for latency. An injected Close
// failure aborts the wrapped writer, so the file does not exist afterwards;
// an injected failure of any other call leaves the wrapped FS untouched.
// The wrapper's Writers implement fsbackend.Truncater exactly when the
// wrapped ones do.
//
// FS, every injector and Switch are safe for concurrent use.
package errorfs
