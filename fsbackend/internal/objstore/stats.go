package objstore

import "sync/atomic"

// Stats counts what one object-store FS wrote. The zero value is ready to
// use and it is safe for concurrent use.
type Stats struct {
	objects atomic.Int64
	bytes   atomic.Int64
	retries atomic.Int64
}

// AddWrite records that one object of n bytes became durable (a PUT or a
// server-side copy that succeeded).
func (s *Stats) AddWrite(n int64) {
	s.objects.Add(1)
	s.bytes.Add(n)
}

// AddRetry records one retried request.
func (s *Stats) AddRetry() { s.retries.Add(1) }

// BytesWritten is the total size of the objects made durable.
func (s *Stats) BytesWritten() int64 { return s.bytes.Load() }

// ObjectsWritten is the number of objects made durable.
func (s *Stats) ObjectsWritten() int64 { return s.objects.Load() }

// Retries is the number of requests that were retried.
func (s *Stats) Retries() int64 { return s.retries.Load() }
