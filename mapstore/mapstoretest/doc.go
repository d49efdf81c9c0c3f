// Package mapstoretest is the MapStore contract suite: every map store
// (the file map store on each fsbackend, the bbolt store, and later ones)
// runs it from its own tests with
//
//	func TestContract(t *testing.T) {
//		mapstoretest.Run(t, func(t *testing.T, dir string, partitions int) mapstore.MapStore {
//			s, err := mystore.Open(dir, partitions)
//			if err != nil {
//				t.Fatal(err)
//			}
//			return s
//		})
//	}
//
// Each subtest gets its own fresh directory (t.TempDir()). open may be
// called several times on one directory within a subtest to simulate a
// restart; the suite always closes the previous store first, and closes
// the last one when the subtest ends, so open must not register a Close
// of its own.
//
// The suite keeps a model of what the store must hold and checks the
// store against it through every read method: Load, LoadAll,
// LoadAllKeys and LoadPartition for every partition. Records carry
// Partition = partition.Of(key, partitions) and versions that grow per
// partition, as the map gives them. What the suite expects beyond the
// letter of mapstore.MapStore (written here so that a store author knows):
//
//   - a Store, StoreAll, Delete or DeleteAll that returned nil is visible to
//     every read method at once and after a restart;
//   - the later of two writes of one key wins (the map never passes
//     records of one key concurrently, so call order is version order),
//     and the Version read back is exactly the one stored;
//   - a stored empty or nil Value reads back as present with len 0;
//   - keys are any non-empty bytes (NUL and 0xFF included); values may be
//     1 MiB;
//   - deleting an absent key, and StoreAll/DeleteAll of no records,
//     succeed;
//   - LoadAll returns the present keys in any order, absent ones left out;
//   - an error returned by LoadPartition's fn stops the scan and is
//     returned (matching errors.Is);
//   - every Key and Value returned is the caller's: a store never reuses
//     or changes it later, and changing it does not change the store;
//   - every call after Close fails with an error matching
//     mapstore.ErrClosed.
//
// The whole suite runs in a few seconds on local disk. Stores on back ends
// where every call is a network round trip may run it with
// RunWith(t, open, Options{Small: true}), which shrinks the two bulk cases
// and keeps every check.
package mapstoretest
