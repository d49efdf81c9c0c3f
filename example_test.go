package stowage_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/stowage/stowage"
	"github.com/stowage/stowage/checkpoint"
	"github.com/stowage/stowage/config"
	"github.com/stowage/stowage/serde"
)

// A member alone with one persisted map on local disk, configured in Go:
// the defaults, then one map entry whose map store is a local folder.
// After Close, a new Open loads the map back from disk.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "stowage-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	cfg := config.Default()
	cfg.AddMap(config.MapConfig{Pattern: "engine*", MapStore: config.LocalMapStore(dir, "seatunnel")})

	for round := 1; round <= 2; round++ {
		node, err := stowage.Open(ctx, stowage.Options{Config: cfg})
		if err != nil {
			log.Fatal(err)
		}
		jobs, err := stowage.GetMap(ctx, node, "engine_runningJobInfo", serde.String(), serde.String())
		if err != nil {
			log.Fatal(err)
		}
		if round == 1 {
			// Put returns once the entry is durable in the map store (and
			// on every sync backup, in a cluster).
			if err := jobs.Put(ctx, "job-1", "RUNNING"); err != nil {
				log.Fatal(err)
			}
		}
		state, found, err := jobs.Get(ctx, "job-1")
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("open %d: job-1 %s (found %v)\n", round, state, found)
		if err := node.Close(); err != nil {
			log.Fatal(err)
		}
	}
	// Output:
	// open 1: job-1 RUNNING (found true)
	// open 2: job-1 RUNNING (found true)
}

// The engine's checkpoint storage on local disk: store a pipeline's state,
// then find the latest checkpoint of the job.
func ExampleOpenCheckpointStorage() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "stowage-checkpoints-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	cfg := config.Default()
	cfg.Engine.Checkpoint.Storage.Namespace = dir + "/"
	cfg.Engine.Checkpoint.Storage.PluginConfig["storage.type"] = "hdfs"
	cfg.Engine.Checkpoint.Storage.PluginConfig["fs.defaultFS"] = "file:///"
	cps, err := stowage.OpenCheckpointStorage(ctx, cfg, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer cps.Close()

	for id := int64(1); id <= 3; id++ {
		st := checkpoint.PipelineState{JobID: "job-1", PipelineID: 1, CheckpointID: id, States: []byte(fmt.Sprint("state ", id))}
		if _, err := cps.StoreCheckpoint(ctx, st); err != nil {
			log.Fatal(err)
		}
	}
	latest, err := cps.GetLatestCheckpoint(ctx, "job-1")
	if err != nil {
		log.Fatal(err)
	}
	for _, p := range latest {
		fmt.Printf("pipeline %d: checkpoint %d, %q\n", p.PipelineID, p.CheckpointID, p.States)
	}
	// Output:
	// pipeline 1: checkpoint 3, "state 3"
}

// A finished job's state written with a time to live: it is gone once the
// time passed, from memory, the backups and the map store (an engine uses
// node.HistoryJobTTL(), seatunnel.engine.history-job-expire-minutes).
func ExampleMap_PutWithTTL() {
	ctx := context.Background()
	node, err := stowage.Open(ctx, stowage.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer node.Close()
	history, err := stowage.GetMap(ctx, node, "engine_finishedJobState", serde.String(), serde.String())
	if err != nil {
		log.Fatal(err)
	}
	if err := history.PutWithTTL(ctx, "job-1", "FINISHED", time.Second); err != nil {
		log.Fatal(err)
	}
	_, found, _ := history.Get(ctx, "job-1")
	fmt.Println("right after the write:", found)
	time.Sleep(1100 * time.Millisecond)
	_, found, _ = history.Get(ctx, "job-1")
	fmt.Println("after its time to live:", found)
	// Output:
	// right after the write: true
	// after its time to live: false
}

// PutAll writes many entries with one call per member that owns some of
// them; GetAll reads them back the same way.
func ExampleMap_PutAll() {
	ctx := context.Background()
	node, err := stowage.Open(ctx, stowage.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer node.Close()
	metrics, err := stowage.GetMap(ctx, node, "engine_metrics", serde.String(), serde.String())
	if err != nil {
		log.Fatal(err)
	}
	var batch []stowage.Entry[string, string]
	for i := range 3 {
		batch = append(batch, stowage.Entry[string, string]{Key: fmt.Sprint("task-", i), Value: fmt.Sprint(i * 10)})
	}
	if err := metrics.PutAll(ctx, batch); err != nil {
		log.Fatal(err)
	}
	got, err := metrics.GetAll(ctx, []string{"task-0", "task-2", "task-9"})
	if err != nil {
		log.Fatal(err)
	}
	for _, e := range got {
		fmt.Println(e.Key, e.Value)
	}
	// Output:
	// task-0 0
	// task-2 20
}
