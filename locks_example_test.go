package stowage_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/stowage/stowage"
	"github.com/stowage/stowage/serde"
)

// A task takes a job's lock for at most 5 s, updates the job's metrics
// under it, and hands the fencing token to what it guards.
func ExampleMap_TryLock() {
	ctx := context.Background()
	node, err := stowage.Open(ctx, stowage.Options{}) // a member alone, memory maps
	if err != nil {
		log.Fatal(err)
	}
	defer node.Close()
	metrics, err := stowage.GetMap(ctx, node, "metrics", serde.String(), serde.String())
	if err != nil {
		log.Fatal(err)
	}

	task := stowage.WithLockOwner(ctx, "task-7") // the holder: any id the caller chooses
	first, ok, err := metrics.TryLock(task, "job-1", 5*time.Second, 30*time.Second)
	if err != nil {
		log.Fatal(err)
	}
	if !ok {
		fmt.Println("job-1 is locked by another task")
		return
	}
	// The holder's own writes pass its lock; others' wait for Unlock.
	if err := metrics.Put(task, "job-1", "rows=42"); err != nil {
		log.Fatal(err)
	}
	if err := metrics.Unlock(task, "job-1"); err != nil {
		log.Fatal(err)
	}

	// Another task's lock of the key gets a larger token: a store that
	// remembers the largest token seen refuses the first holder from now.
	other := stowage.WithLockOwner(ctx, "task-8")
	second, err := metrics.Lock(other, "job-1", 30*time.Second)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("second token above the first:", first.Less(second))
	if err := metrics.Unlock(other, "job-1"); err != nil {
		log.Fatal(err)
	}
	locked, err := metrics.IsLocked(ctx, "job-1")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("locked:", locked)
	// Output:
	// second token above the first: true
	// locked: false
}
