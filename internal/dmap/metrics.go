package dmap

import "github.com/prometheus/client_golang/prometheus"

type metrics struct {
	storeSeconds *prometheus.HistogramVec
	storeErrors  *prometheus.CounterVec
	batchRecords prometheus.Histogram
	batchBytes   prometheus.Histogram
	batchSeconds prometheus.Histogram
	loadSeconds  *prometheus.GaugeVec

	backupSeconds prometheus.Histogram
	refused       prometheus.Counter
	acquired      *prometheus.CounterVec
	tableVersion  prometheus.Gauge
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
	}
	m.backupSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "stowage_backup_ack_seconds", Help: "Time for one synchronous backup to acknowledge a record.",
		Buckets: prometheus.ExponentialBuckets(50e-6, 2, 16),
	})
	m.refused = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "stowage_backup_refused_total",
		Help: "Records a backup refused because this member was no longer the partition's owner (a newer table or epoch); the write failed and was routed again.",
	})
	m.acquired = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "stowage_partitions_acquired_total",
		Help: "Partitions this member took ownership of, by how: handover (migration from the previous owner), promotion (fail-over to a backup's copy), store (loaded from the map store: a fresh start, or a fail-over without a copy).",
	}, []string{"source"})
	m.tableVersion = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "stowage_partition_table_version", Help: "Version of the partition table this member has installed.",
	})
	reg.MustRegister(m.storeSeconds, m.storeErrors, m.batchRecords, m.batchBytes, m.batchSeconds, m.loadSeconds,
		m.backupSeconds, m.refused, m.acquired, m.tableVersion)
	return m
}
