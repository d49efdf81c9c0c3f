// Package httpapi is the HTTP API of a stowage member (`stowage node
// --http`), built only on the public API of package stowage, so that
// anything it does a library user can do too:
//
//	PUT|GET|DELETE /v1/maps/{map}/entries/{key}  one entry; the key is the
//	                                              path segment's UTF-8 bytes,
//	                                              the value the body; a PUT
//	                                              may give ?ttl= (seconds or
//	                                              a Go duration, 0: never
//	                                              expires; else the map's)
//	GET /v1/maps/{map}/entries?limit=&after=     keys in byte order, paged
//	GET /v1/maps/{map}                           size and load state
//	GET /v1/maps                                 the maps this member holds
//	GET /v1/cluster                              members, master, table
//	GET /v1/status                               what the status page shows:
//	                                              members, partition owners,
//	                                              maps, checkpoints, take-overs
//	GET / (and /ui/)                             the status page, built in
//	GET /healthz                                 200 once every member serves
//	GET /metrics                                 Prometheus
//
// A PUT answers 204 only once the write is durable and on every sync
// backup; errors are JSON {"error": "..."} with a status that says whose
// fault it was: 400 for a bad map name, limit or ttl, 413 for a body over the
// record limit, 503 while the node closes or split-brain protection
// refuses, 504 when the owner died mid-write and the outcome is unknown.
//
// The status page (ui/, embedded) polls /v1/status and draws it; it loads
// nothing from elsewhere and puts every value into the page as text. Its
// answers name no path on the server: a storage error is reported as
// such, without its details.
//
// Imports: package stowage and its public types, serde, checkpoint's
// types (the storage stowage.OpenCheckpointStorage returns), net/http,
// Prometheus' handler. Nothing below the root package.
package httpapi
