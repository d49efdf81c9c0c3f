package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/stowage/stowage/serde/keyhash"
)

// benchOwners is what a client needs of GET /v1/status to send each put
// to its partition's owner, as Hazelcast's smart client does: the
// member's own id, and the partition table it serves.
type benchOwners struct {
	Self           string   `json:"self"`
	PartitionCount int      `json:"partition_count"`
	TableVersion   int64    `json:"partition_table_version"`
	Owners         []string `json:"owners"`
}

// maxStatusBytes bounds the status answer the bench reads.
const maxStatusBytes = 64 << 20

// benchRoute asks every member at addrs for its id and partition table
// and returns where to send a key: the address of the owner of the key's
// partition in the newest table (xxh64 of the key's UTF-8 bytes modulo
// the partition count, as the members hash the API's keys), or the
// fallback when no member answered for that owner.
func benchRoute(ctx context.Context, client *http.Client, addrs []string) (func(key, fallback string) string, error) {
	byID := map[string]string{}
	var newest benchOwners
	for _, addr := range addrs {
		o, err := benchOwnersOf(ctx, client, addr)
		if err != nil {
			return nil, err
		}
		byID[o.Self] = addr
		if o.TableVersion > newest.TableVersion {
			newest = o
		}
	}
	if newest.PartitionCount <= 0 || len(newest.Owners) != newest.PartitionCount {
		return nil, fmt.Errorf("no member answered with a partition table of %d partitions", newest.PartitionCount)
	}
	at := make([]string, newest.PartitionCount)
	for p, id := range newest.Owners {
		at[p] = byID[id]
	}
	return func(key, fallback string) string {
		if a := at[keyhash.Partition([]byte(key), len(at))]; a != "" {
			return a
		}
		return fallback
	}, nil
}

func benchOwnersOf(ctx context.Context, client *http.Client, addr string) (benchOwners, error) {
	var o benchOwners
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/v1/status", nil)
	if err != nil {
		return o, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return o, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return o, fmt.Errorf("GET /v1/status at %s: %s", addr, resp.Status)
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxStatusBytes)).Decode(&o); err != nil {
		return o, fmt.Errorf("GET /v1/status at %s: %w", addr, err)
	}
	return o, nil
}
