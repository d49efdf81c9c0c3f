package checkpoint

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/stowage/stowage/fsbackend"
)

// PipelineState is one completed checkpoint of one pipeline of a job, as
// SeaTunnel's PipelineState carries it. States is opaque to the storage.
//
// A PipelineState passed to a store call is owned by the storage until the
// call returns (for AsyncStoreCheckpoint: until its Pending is done); the
// caller must not modify States meanwhile. Returned values are owned by the
// caller.
type PipelineState struct {
	JobID        string
	PipelineID   int
	CheckpointID int64
	States       []byte
	// Created is when the checkpoint was written. It is information for
	// operators only and never used for ordering ("latest" is the highest
	// CheckpointID). Zero on store means "now".
	Created time.Time
}

// Storage is the checkpoint storage contract, mirroring SeaTunnel's
// CheckpointStorage. Implementations are safe for concurrent use.
//
// Lists are ordered by pipeline id, then checkpoint id, ascending. A job or
// pipeline without checkpoints gives an empty list and a nil error; only the
// calls that return a single checkpoint report ErrNotFound.
type Storage interface {
	// StoreCheckpoint makes st durable and returns the file name it was
	// stored under (relative to the namespace). It then deletes older
	// checkpoints of the same pipeline beyond the retention limit.
	StoreCheckpoint(ctx context.Context, st PipelineState) (name string, err error)
	// AsyncStoreCheckpoint queues st for a background store. The result,
	// success or failure, is reported through the returned Pending.
	AsyncStoreCheckpoint(ctx context.Context, st PipelineState) *Pending
	// GetAllCheckpoints returns every readable checkpoint of the job.
	GetAllCheckpoints(ctx context.Context, jobID string) ([]PipelineState, error)
	// GetLatestCheckpoint returns the latest readable checkpoint of each
	// pipeline of the job.
	GetLatestCheckpoint(ctx context.Context, jobID string) ([]PipelineState, error)
	// GetLatestCheckpointByJobAndPipeline returns the readable checkpoint
	// with the highest id of one pipeline, or ErrNotFound.
	GetLatestCheckpointByJobAndPipeline(ctx context.Context, jobID string, pipelineID int) (PipelineState, error)
	// GetCheckpointsByJobAndPipeline returns every readable checkpoint of
	// one pipeline.
	GetCheckpointsByJobAndPipeline(ctx context.Context, jobID string, pipelineID int) ([]PipelineState, error)
	// GetCheckpoint returns one checkpoint, ErrNotFound if it does not
	// exist, or an error wrapping ErrCorrupt if its file is damaged.
	GetCheckpoint(ctx context.Context, jobID string, pipelineID int, checkpointID int64) (PipelineState, error)
	// DeleteCheckpoint deletes every checkpoint of a job (nil if none).
	DeleteCheckpoint(ctx context.Context, jobID string) error
	// DeleteCheckpointByID deletes one checkpoint (nil if it is absent).
	DeleteCheckpointByID(ctx context.Context, jobID string, pipelineID int, checkpointID int64) error
	// DeleteCheckpoints deletes several checkpoints of one pipeline.
	DeleteCheckpoints(ctx context.Context, jobID string, pipelineID int, checkpointIDs []int64) error
	// Close finishes every queued asynchronous store, stops the storage's
	// goroutines and releases what the storage opened itself.
	Close() error
}

// Defaults used where Options leave a field zero.
const (
	// DefaultNamespace is SeaTunnel's default plugin-config namespace.
	DefaultNamespace = "/seatunnel/checkpoint/"
	// DefaultMaxRetained is SeaTunnel's default max-retained (its
	// ServerConfigOptions since 2.3.9; earlier releases kept 1), the same
	// default package config gives.
	DefaultMaxRetained = 20
	// KeepAll as MaxRetained disables retention.
	KeepAll = -1
	// DefaultAsyncQueue is the capacity of the asynchronous store queue.
	DefaultAsyncQueue = 64
	// DefaultAsyncWorkers is the number of goroutines that run queued stores.
	DefaultAsyncWorkers = 2
)

// Options configure a file-backed Storage (see Open).
type Options struct {
	// FS is the storage, rooted at the storage root (the local "/", an
	// HDFS cluster's "/", a bucket). The caller keeps ownership: Close
	// does not close it.
	FS fsbackend.FS
	// Namespace is the parent directory of every job's checkpoints and
	// must end with "/" (e.g. "/seatunnel/checkpoint/"). A leading "/" is
	// optional. Empty means DefaultNamespace.
	Namespace string
	// MaxRetained is how many completed checkpoints are kept per pipeline:
	// 0 means DefaultMaxRetained, KeepAll (or any negative) keeps all.
	MaxRetained int
	// Logger receives warnings (damaged checkpoints, failed clean-ups).
	// Nil discards them.
	Logger *slog.Logger
	// AsyncQueue is the capacity of the asynchronous store queue (0 means
	// DefaultAsyncQueue); AsyncWorkers the number of store goroutines (0
	// means DefaultAsyncWorkers).
	AsyncQueue, AsyncWorkers int
	// OnDamage, if set, is called for every damaged checkpoint file that a
	// read skipped. It may be called concurrently.
	OnDamage func(Damage)
	// Fence, if set, is asked before every store and delete, and before
	// the background removal of retired checkpoints and deleted jobs: an
	// error refuses the call with an error matching ErrFenced and the
	// fence's error, having written nothing (background work is left for
	// a later store or delete). A stowage.Node gives its cluster's lease
	// on the namespace here (fsbackend/nslease's Lease.Check).
	Fence func() error
}

// Errors returned by Storage calls, matched with errors.Is.
var (
	// ErrNotFound: the requested checkpoint does not exist (or no
	// readable checkpoint of the pipeline exists).
	ErrNotFound = errors.New("stowage/checkpoint: checkpoint not found")
	// ErrCorrupt: a checkpoint file exists but does not check out.
	ErrCorrupt = errors.New("stowage/checkpoint: checkpoint file is damaged")
	// ErrInvalidJobID: a job id is empty or holds "/", "\", "..", NUL.
	ErrInvalidJobID = errors.New("stowage/checkpoint: invalid job id")
	// ErrInvalidID: a pipeline or checkpoint id is out of range.
	ErrInvalidID = errors.New("stowage/checkpoint: invalid pipeline or checkpoint id")
	// ErrExists: a checkpoint with the same job, pipeline and id is
	// already stored with different contents. Storing identical contents
	// again succeeds.
	ErrExists = errors.New("stowage/checkpoint: checkpoint already stored with different contents")
	// ErrClosed: the storage was closed.
	ErrClosed = errors.New("stowage/checkpoint: storage closed")
	// ErrUnknownStorage: New was given a name no factory is registered for.
	ErrUnknownStorage = errors.New("stowage/checkpoint: unknown checkpoint storage type")
)
