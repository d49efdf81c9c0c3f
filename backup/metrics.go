package backup

import "github.com/prometheus/client_golang/prometheus"

type metrics struct {
	backupSeconds prometheus.Histogram
	refused       prometheus.Counter
	acquired      *prometheus.CounterVec
	tableVersion  prometheus.Gauge
	deltaSaved    prometheus.Counter
	deltaSent     prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		backupSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "stowage_backup_ack_seconds", Help: "Time for one synchronous backup to acknowledge a record.",
			Buckets: prometheus.ExponentialBuckets(50e-6, 2, 16),
		}),
		refused: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "stowage_backup_refused_total",
			Help: "Records a backup refused because this member was no longer the partition's owner (a newer table or epoch); the write failed and was routed again.",
		}),
		acquired: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "stowage_partitions_acquired_total",
			Help: "Partitions this member took ownership of, by how: handover (migration from the previous owner), promotion (fail-over to a backup's copy), store (loaded from the map store: a fresh start, or a fail-over without a copy).",
		}, []string{"source"}),
		tableVersion: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "stowage_partition_table_version", Help: "Version of the partition table this member has installed.",
		}),
		deltaSaved: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "stowage_partition_delta_entries_saved_total",
			Help: "Entries a fill or hand-over left out because the receiving member already held them (a delta against its copy).",
		}),
		deltaSent: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "stowage_partition_deltas_total",
			Help: "Fills and hand-overs of a partition sent as a delta against the receiving member's copy.",
		}),
	}
	reg.MustRegister(m.backupSeconds, m.refused, m.acquired, m.tableVersion, m.deltaSaved, m.deltaSent)
	return m
}
