package stowage.peers;

import java.util.Arrays;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.seatunnel.engine.imap.storage.api.IMapStorage;
import org.apache.seatunnel.engine.imap.storage.file.IMapFileStorageFactory;

/**
 * Write-through of SeaTunnel's IMapFileStorage (imap-storage-file), called
 * directly as the engine's IMap MapStore does: {@code --writers} threads
 * each call {@code store(key, value)} {@code --puts} times with
 * {@code --value-size}-byte values, one key after another. Prints one JSON
 * line: puts/s and the median and p90 latency of a store.
 *
 * <p>Arguments ({@code --key value}): {@code --fs} ({@code hdfs://host:port}
 * or {@code file:///}), {@code --namespace}, {@code --cluster},
 * {@code --writers}, {@code --puts}, {@code --value-size}, {@code --hadoop}
 * (comma-separated {@code key=value} Hadoop settings, handed over as the
 * plugin's {@code seatunnel.hadoop.} properties).
 *
 * <p>What the plugin makes durable: its WAL writer appends each record to
 * an open file and calls hsync on it before store returns (one DataNode
 * sync per record); store is serialized by the plugin's disruptor, so
 * several writers take turns.
 */
public final class ImapBench {
    private ImapBench() {}

    /** The value stored: the plugin's serializer (protostuff) takes objects, not bare arrays. */
    public static final class Value {
        public byte[] data;

        public Value() {}

        Value(byte[] data) {
            this.data = data;
        }
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> a = new HashMap<>();
        for (int i = 0; i + 1 < args.length; i += 2) {
            a.put(args[i].substring(2), args[i + 1]);
        }
        int writers = Integer.parseInt(a.getOrDefault("writers", "1"));
        int puts = Integer.parseInt(a.getOrDefault("puts", "2000"));
        int valueSize = Integer.parseInt(a.getOrDefault("value-size", "256"));
        Map<String, Object> conf = new HashMap<>();
        conf.put("storage.type", "hdfs");
        conf.put("fs.defaultFS", a.getOrDefault("fs", "file:///"));
        conf.put("namespace", a.getOrDefault("namespace", "/tmp/seatunnel-imap-peers"));
        conf.put("clusterName", a.getOrDefault("cluster", "peers"));
        conf.put("businessName", "bench_write_" + writers);
        for (String kv : a.getOrDefault("hadoop", "").split(",")) {
            int eq = kv.indexOf('=');
            if (eq > 0) {
                conf.put("seatunnel.hadoop." + kv.substring(0, eq).trim(), kv.substring(eq + 1).trim());
            }
        }
        IMapStorage storage = new IMapFileStorageFactory().create(conf);
        byte[] bytes = new byte[valueSize];
        Arrays.fill(bytes, (byte) 'v');
        Value value = new Value(bytes);
        for (int i = 0; i < 100; i++) { // warm-up
            storage.store("warm-" + i, value);
        }
        long[] took = new long[writers * puts];
        AtomicInteger next = new AtomicInteger();
        CountDownLatch done = new CountDownLatch(writers);
        long start = System.nanoTime();
        for (int w = 0; w < writers; w++) {
            final int id = w;
            new Thread(() -> {
                try {
                    for (int i = 0; i < puts; i++) {
                        long t = System.nanoTime();
                        if (!storage.store("w" + id + "-" + i, value)) {
                            throw new IllegalStateException("store returned false");
                        }
                        took[next.getAndIncrement()] = System.nanoTime() - t;
                    }
                } finally {
                    done.countDown();
                }
            }).start();
        }
        done.await();
        double secs = (System.nanoTime() - start) / 1e9;
        Arrays.sort(took);
        System.out.printf(Locale.ROOT, "{\"workload\":\"imap-write\",\"writers\":%d,\"puts\":%d,\"puts_per_sec\":%.1f,\"p50_ms\":%.3f,\"p90_ms\":%.3f}%n",
                writers, writers * puts, writers * puts / secs, took[took.length / 2] / 1e6, took[took.length * 9 / 10] / 1e6);
        storage.destroy(true);
        System.exit(0);
    }
}
