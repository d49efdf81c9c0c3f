package filestore_test

import (
	"context"
	"testing"

	"github.com/stowage/stowage/fsbackend/local"
	"github.com/stowage/stowage/mapstore"
	"github.com/stowage/stowage/mapstore/filestore"
	"github.com/stowage/stowage/mapstore/mapstoretest"
)

func TestContract(t *testing.T) {
	mapstoretest.Run(t, func(t *testing.T, dir string, partitions int) mapstore.MapStore {
		f, err := local.New(dir)
		if err != nil {
			t.Fatal(err)
		}
		s, err := filestore.Open(context.Background(), filestore.Options{FS: f, Partitions: partitions})
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}
