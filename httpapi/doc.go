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
//	POST /v1/maps/{map}/bulk/put                 {"entries":[{"key","value"}]}:
//	                                              PutAll (?ttl= as a PUT);
//	                                              200 {"written": n}
//	POST /v1/maps/{map}/bulk/get                 {"keys":[...]}: GetAll; 200
//	                                              {"entries":[...],"missing":[...]}
//	POST /v1/maps/{map}/bulk/remove              {"keys":[...]}: RemoveAll;
//	                                              200 {"removed": n}
//	POST /v1/maps/{map}/locks/{key}?lease=&wait=&owner=
//	                                              take the key's lock: 200
//	                                              {"owner","token","fence"},
//	                                              409 if still held by another
//	                                              owner after wait
//	DELETE /v1/maps/{map}/locks/{key}?owner=     release one hold (204; 409
//	                                              if owner holds none);
//	                                              ?force=true: whoever holds it
//	GET /v1/maps/{map}/locks/{key}               {"locked": bool}
//	POST /v1/maps/{map}/flush                    store the map's write-behind
//	                                              queues on every member
//	                                              (Map.Flush); 204
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
// Locks: lease and wait are Go durations ("30s"; lease at most 24h, 0:
// the default lease, stowage.DefaultLockLease; wait at most 5m, 0: do not
// wait). The lock owner is the owner parameter or the X-Stowage-Lock-Owner
// header; a POST without one gets a new owner id in its answer. A PUT or
// DELETE of an entry carrying the holder's owner passes its lock; writes
// by anyone else wait for the unlock or the lease's end (bounded by the
// request). The token is the fencing token (see stowage.Map.Lock), an
// epoch and a sequence number compared in that order.
//
// Bulk (bulk.go): one request carries many entries, sent to their
// owners one call per member. Values are text, or base64 with
// ?encoding=base64; ?timeout= (a Go duration, at most 5m) bounds the
// request. A body over 32 MiB is a 413 and more than 10,000 keys a 400,
// both naming the limit; an empty key is a 400 naming its index. When
// keys fail, the status is the first failure's and {"failed":[{"key",
// "error"}]} names each; the keys not named were written.
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
// Security (auth.go, tls.go, server.go; docs/security.md): WithSecurity
// makes every request but GET /healthz carry basic or bearer credentials
// (401 with WWW-Authenticate otherwise, the same answer whatever was
// wrong) and, on a loopback bind, name a loopback host (421 otherwise,
// against DNS rebinding). TLSConfig builds the TLS configuration from
// seatunnel.engine.http (PKCS#12 key and trust stores, or PEM), NewServer
// the http.Server with timeouts for headers, bodies (a per-request
// deadline from the body's length), answers and idle connections.
//
// Imports: package stowage and its public types, serde, checkpoint's
// types (the storage stowage.OpenCheckpointStorage returns), net/http,
// Prometheus' handler, config (seatunnel.engine.http) and go-pkcs12.
// Nothing else below the root package.
package httpapi
