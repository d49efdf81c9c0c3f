package dmap

import "github.com/prometheus/client_golang/prometheus"

type metrics struct {
	storeSeconds *prometheus.HistogramVec
	storeErrors  *prometheus.CounterVec
	batchRecords prometheus.Histogram
	batchBytes   prometheus.Histogram
	batchSeconds prometheus.Histogram
	loadSeconds  *prometheus.GaugeVec
	expired      *prometheus.CounterVec
	bulkCalls    *prometheus.CounterVec
	bulkKeys     *prometheus.CounterVec

	listenerEvents  *prometheus.CounterVec
	listenerDropped *prometheus.CounterVec

	behindQueued *prometheus.GaugeVec
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		storeSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "stowage_store_latency_seconds", Help: "Write-through latency of one map operation, until durable.",
			Buckets: prometheus.ExponentialBuckets(50e-6, 2, 16),
		}, []string{"map"}),
		storeErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "stowage_store_errors_total", Help: "Map operations failed because the write-through failed.",
		}, []string{"map"}),
		batchRecords: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "stowage_log_batch_records", Help: "Records per group-commit batch.",
			Buckets: prometheus.ExponentialBuckets(1, 2, 12),
		}),
		batchBytes: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "stowage_log_batch_bytes", Help: "Bytes per group-commit batch.",
			Buckets: prometheus.ExponentialBuckets(64, 4, 10),
		}),
		batchSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "stowage_log_batch_seconds", Help: "Time to make one group-commit batch durable.",
			Buckets: prometheus.ExponentialBuckets(50e-6, 2, 16),
		}),
		loadSeconds: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "stowage_map_load_seconds", Help: "Time spent loading a map's partitions from its map store (summed over partitions).",
		}, []string{"map"}),
		expired: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "stowage_map_expired_total", Help: "Entries the owner removed because their time to live or max idle time ran out.",
		}, []string{"map"}),
		bulkCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "stowage_bulk_calls_served_total", Help: "Bulk calls (PutAll, GetAll, RemoveAll) this member served for another member.",
		}, []string{"map"}),
		bulkKeys: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "stowage_bulk_keys_served_total", Help: "Keys of the bulk calls this member served for another member.",
		}, []string{"map"}),
		listenerEvents: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "stowage_listener_events_total", Help: "Entry events this member's listeners were called with.",
		}, []string{"map"}),
		listenerDropped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "stowage_listener_events_dropped_total",
			Help: "Entry events dropped: a listener's queue was full (queue), the outbox to a member was full (outbox) or its call failed (send), or an event arrived after a newer owner's (stale).",
		}, []string{"map", "where"}),
		behindQueued: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "stowage_write_behind_queued", Help: "Records a write-behind map's queue holds on this member, not yet stored.",
		}, []string{"map"}),
	}
	reg.MustRegister(m.storeSeconds, m.storeErrors, m.batchRecords, m.batchBytes, m.batchSeconds, m.loadSeconds, m.expired,
		m.bulkCalls, m.bulkKeys, m.listenerEvents, m.listenerDropped, m.behindQueued)
	return m
}
