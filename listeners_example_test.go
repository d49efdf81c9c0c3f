package stowage_test

import (
	"context"
	"fmt"
	"log"

	"github.com/stowage/stowage"
	"github.com/stowage/stowage/serde"
)

// A listener of a job-state map hears each change with its values, in
// the order of the writes to a key, on its own goroutine; a write never
// waits for it.
func ExampleMap_AddEntryListener() {
	ctx := context.Background()
	node, err := stowage.Open(ctx, stowage.Options{}) // a member alone, memory maps
	if err != nil {
		log.Fatal(err)
	}
	defer node.Close()
	states, err := stowage.GetMap(ctx, node, "jobState", serde.String(), serde.String())
	if err != nil {
		log.Fatal(err)
	}

	heard := make(chan string, 16)
	id, err := states.AddEntryListener(ctx, func(ev stowage.EntryEvent[string, string]) {
		switch ev.Type {
		case stowage.EntryAdded:
			heard <- fmt.Sprintf("%s %s: %s", ev.Type, ev.Key, ev.Value)
		case stowage.EntryUpdated:
			heard <- fmt.Sprintf("%s %s: %s -> %s", ev.Type, ev.Key, ev.OldValue, ev.Value)
		case stowage.EntryRemoved, stowage.EntryExpired:
			heard <- fmt.Sprintf("%s %s (was %s)", ev.Type, ev.Key, ev.OldValue)
		case stowage.EntryLost:
			heard <- fmt.Sprintf("missed %d events", ev.Lost)
		}
	}, stowage.ListenerOptions{IncludeValue: true})
	if err != nil {
		log.Fatal(err)
	}

	for _, state := range []string{"RUNNING", "FINISHED"} {
		if err := states.Put(ctx, "job-1", state); err != nil {
			log.Fatal(err)
		}
	}
	if err := states.Delete(ctx, "job-1"); err != nil {
		log.Fatal(err)
	}
	for range 3 {
		fmt.Println(<-heard)
	}
	if err := states.RemoveEntryListener(ctx, id); err != nil {
		log.Fatal(err)
	}
	// Output:
	// ADDED job-1: RUNNING
	// UPDATED job-1: RUNNING -> FINISHED
	// REMOVED job-1 (was FINISHED)
}
