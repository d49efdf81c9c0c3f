package config

import "strings"

// propertySet is what stowage knows of one properties block: the names it
// acts on, and every name Hazelcast defines there (those included), so
// that a name one or two edits from a known one can be refused as
// misspelt. Hazelcast itself accepts any name.
type propertySet struct {
	effective map[string]bool
	known     map[string]bool
}

func newPropertySet(effective []string, known ...[]string) *propertySet {
	s := &propertySet{effective: map[string]bool{}, known: map[string]bool{}}
	for _, n := range effective {
		s.effective[n] = true
		s.known[n] = true
	}
	for _, l := range known {
		for _, n := range l {
			s.known[n] = true
		}
	}
	return s
}

// near returns the known name one or two edits from name (case counts:
// Hazelcast's names are case-sensitive), or "".
func (s *propertySet) near(name string) string {
	best, bestD := "", 3
	for k := range s.known {
		if d := editDistance(name, k); d > 0 && (d < bestD || d == bestD && k < best) {
			best, bestD = k, d
		}
	}
	if bestD > 2 || len(name) < 8 {
		return ""
	}
	return best
}

// memberProperties: the node (join.go) acts on the minimum cluster size
// before the first partition table, the address a member binds and
// advertises, and the port of stowage's member-to-member transport.
var memberProperties = newPropertySet(
	[]string{"hazelcast.initial.min.cluster.size", "hazelcast.local.localAddress", "stowage.transport.port", "stowage.namespace.lease.ttl",
		"hazelcast.map.write.behind.queue.capacity"},
	hazelcastClusterProperties, hazelcastOtherMemberProperties,
)

var clientProperties = newPropertySet(nil, hazelcastClientProperties, hazelcastClusterProperties)

// hazelcastClusterProperties are the names of Hazelcast 5's
// ClusterProperty.
var hazelcastClusterProperties = strings.Fields(`
hazelcast.network.stats.refresh.interval.seconds tcp.channels.per.connection
hazelcast.io.balancer.interval.seconds hazelcast.prefer.ipv4.stack hazelcast.socket.bind.any
hazelcast.socket.server.bind.any hazelcast.socket.client.bind.any hazelcast.socket.client.bind
hazelcast.socket.receive.buffer.size hazelcast.socket.send.buffer.size hazelcast.socket.buffer.direct
hazelcast.socket.client.receive.buffer.size hazelcast.socket.client.send.buffer.size
hazelcast.socket.client.buffer.direct hazelcast.socket.linger.seconds
hazelcast.socket.connect.timeout.seconds hazelcast.socket.keep.alive hazelcast.socket.no.delay
hazelcast.io.thread.count hazelcast.io.input.thread.count hazelcast.io.output.thread.count
hazelcast.io.write.through hazelcast.concurrent.window.ms hazelcast.connection.monitor.interval
hazelcast.connection.monitor.max.faults hazelcast.client.protocol.max.message.bytes
hazelcast.partition.count hazelcast.initial.min.cluster.size hazelcast.initial.wait.seconds
hazelcast.tcp.join.port.try.count hazelcast.tcp.join.previously.joined.member.address.retention.seconds
hazelcast.multicast.socket.set.interface hazelcast.multicast.group hazelcast.connect.all.wait.seconds
hazelcast.discovery.enabled hazelcast.discovery.public.ip.enabled
hazelcast.merge.first.run.delay.seconds hazelcast.merge.next.run.delay.seconds
hazelcast.partition.migration.interval hazelcast.partition.migration.timeout
hazelcast.partition.migration.fragments.enabled hazelcast.partition.migration.chunks.enabled
hazelcast.partition.migration.chunks.max.migrating.data.in.mb hazelcast.wait.seconds.before.join
hazelcast.max.wait.seconds.before.join hazelcast.max.join.seconds hazelcast.max.join.merge.target.seconds
hazelcast.heartbeat.interval.seconds hazelcast.mastership.claim.timeout.seconds
hazelcast.max.no.heartbeat.seconds hazelcast.partial.member.disconnection.resolution.heartbeat.count
hazelcast.partial.member.disconnection.resolution.algorithm.timeout.seconds
hazelcast.heartbeat.failuredetector.type hazelcast.member.list.publish.interval.seconds
hazelcast.client.max.no.heartbeat.seconds hazelcast.cluster.shutdown.timeout.seconds
hazelcast.graceful.shutdown.max.wait hazelcast.partition.table.send.interval
hazelcast.partition.backup.sync.interval hazelcast.partition.max.parallel.migrations
hazelcast.partition.max.parallel.replications hazelcast.partitioning.strategy.class
hazelcast.client.cleanup.period.millis hazelcast.client.cleanup.timeout.millis
hazelcast.init.cluster.version hazelcast.metrics.enabled hazelcast.metrics.mc.enabled
hazelcast.metrics.mc.retention hazelcast.metrics.jmx.enabled hazelcast.health.monitoring.level
hazelcast.health.monitoring.delay.seconds hazelcast.health.monitoring.threshold.memory.percentage
hazelcast.health.monitoring.threshold.cpu.percentage hazelcast.jmx hazelcast.jmx.update.interval.seconds
hazelcast.mc.max.visible.slow.operations.count hazelcast.mc.executor.thread.count
hazelcast.metrics.debug.enabled hazelcast.metrics.datastructures.enabled
hazelcast.metrics.collection.frequency hazelcast.slow.operation.detector.enabled
hazelcast.slow.operation.detector.threshold.millis hazelcast.slow.operation.detector.log.retention.seconds
hazelcast.slow.operation.detector.log.purge.interval.seconds
hazelcast.slow.operation.detector.stacktrace.logging.enabled
hazelcast.query.predicate.parallel.evaluation hazelcast.aggregation.accumulation.parallel.evaluation
hazelcast.hd.global.index.enabled hazelcast.query.result.size.limit
hazelcast.query.max.local.partition.limit.for.precheck hazelcast.query.optimizer.type
hazelcast.index.copy.behavior hazelcast.clientengine.query.thread.count
hazelcast.wan.consumer.invocation.threshold hazelcast.wan.consumer.ack.delay.backoff.init
hazelcast.wan.consumer.ack.delay.backoff.max hazelcast.wan.consumer.ack.delay.backoff.multiplier
hazelcast.map.load.chunk.size hazelcast.map.replica.scheduled.task.delay.seconds
hazelcast.map.expiry.delay.seconds hazelcast.map.eviction.batch.size
hazelcast.map.invalidation.batch.enabled hazelcast.map.invalidation.batch.size
hazelcast.map.invalidation.batchfrequency.seconds hazelcast.map.write.behind.queue.capacity
hazelcast.operation.call.timeout.millis hazelcast.operation.backup.timeout.millis
hazelcast.operation.fail.on.indeterminate.state hazelcast.invocation.max.retry.count
hazelcast.invocation.retry.pause.millis hazelcast.backpressure.enabled hazelcast.backpressure.syncwindow
hazelcast.backpressure.backoff.timeout.millis hazelcast.backpressure.max.concurrent.invocations.per.partition
hazelcast.partition.migration.stale.read.disabled hazelcast.operation.thread.count
hazelcast.operation.generic.thread.count hazelcast.operation.priority.generic.thread.count
hazelcast.operation.response.thread.count hazelcast.cache.invalidation.batch.enabled
hazelcast.cache.invalidation.batch.size hazelcast.cache.invalidation.batchfrequency.seconds
hazelcast.jcache.provider.type hazelcast.clientengine.thread.count
hazelcast.clientengine.blocking.thread.count hazelcast.event.thread.count
hazelcast.event.queue.capacity hazelcast.event.queue.timeout.millis hazelcast.event.sync.timeout.millis
hazelcast.phone.home.enabled hazelcast.shutdownhook.enabled hazelcast.shutdownhook.policy
hazelcast.logging.type hazelcast.logging.details.enabled hazelcast.lock.max.lease.time.seconds
hazelcast.enterprise.license.key hazelcast.serialization.version
hazelcast.data.search.dynamic.config.first.enabled hazelcast.member.naming.moby.enabled
hazelcast.jet.job.scan.period hazelcast.jet.job.results.ttl.seconds hazelcast.jet.job.results.max.size
hazelcast.jet.idle.cooperative.min.microseconds hazelcast.jet.idle.cooperative.max.microseconds
hazelcast.jet.idle.noncooperative.min.microseconds hazelcast.jet.idle.noncooperative.max.microseconds
hazelcast.jet.custom.lib.dir hazelcast.logging.emoji.enabled hazelcast.security.recommendations
hazelcast.sql.experimental.custom.types.enabled hazelcast.persistence.auto.cluster.state
hazelcast.persistence.auto.cluster.state.strategy hazelcast.alto.enabled hazelcast.alto.eventloop.count
`)

// hazelcastOtherMemberProperties are member properties Hazelcast defines
// outside ClusterProperty that SeaTunnel's files use: the phi-accrual
// failure detector's, and the address properties.
var hazelcastOtherMemberProperties = strings.Fields(`
hazelcast.heartbeat.phiaccrual.failuredetector.threshold
hazelcast.heartbeat.phiaccrual.failuredetector.sample.size
hazelcast.heartbeat.phiaccrual.failuredetector.min.std.dev.millis
hazelcast.local.localAddress hazelcast.local.publicAddress
hazelcast.diagnostics.enabled hazelcast.diagnostics.directory
`)

// hazelcastClientProperties are the names of Hazelcast 5's ClientProperty.
var hazelcastClientProperties = strings.Fields(`
hazelcast.client.heartbeat.interval hazelcast.client.heartbeat.timeout
hazelcast.client.event.thread.count hazelcast.client.event.queue.capacity
hazelcast.client.invocation.timeout.seconds hazelcast.client.invocation.retry.pause.millis
hazelcast.client.invocation.backoff.timeout.millis hazelcast.client.max.concurrent.invocations
hazelcast.client.shuffle.member.list hazelcast.client.statistics.enabled
hazelcast.client.statistics.period.seconds hazelcast.client.response.thread.count
hazelcast.client.response.thread.dynamic hazelcast.client.internal.executor.pool.size
hazelcast.client.io.balancer.interval.seconds hazelcast.client.io.input.thread.count
hazelcast.client.io.output.thread.count hazelcast.client.io.write.through
hazelcast.client.concurrent.window.ms hazelcast.client.operation.backup.timeout.millis
hazelcast.client.operation.fail.on.indeterminate.state hazelcast.client.cloud.url
hazelcast.client.metrics.enabled hazelcast.client.metrics.debug.enabled
hazelcast.client.metrics.collection.frequency hazelcast.client.cluster.reconnect
`)
