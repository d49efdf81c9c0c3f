package stowage.peers;

import java.util.Arrays;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.LocatedFileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RemoteIterator;

import org.apache.seatunnel.engine.imap.storage.api.IMapStorage;
import org.apache.seatunnel.engine.imap.storage.file.IMapFileStorageFactory;

/**
 * EAGER load of SeaTunnel's IMapFileStorage (imap-storage-file 2.3.8) on
 * its own, without Hazelcast: {@code --entries} entries of
 * {@code --value-size} bytes are written with {@code storeAll} in batches
 * of 1,000 (untimed; keys {@code job-<i%64>-key-<i>}, as stowage's bench
 * names them), the storage is closed ({@code destroy(false)}: files kept),
 * and a fresh storage instance on the same namespace, cluster and business
 * name is created and asked for {@code loadAll()}, the call SeaTunnel's
 * FileMapStore makes to load a map on start. Prints one JSON line: the
 * time of create + loadAll and of loadAll alone, entries/s of the entries
 * loaded, how many of the written keys the load returned with a value of
 * the written size ({@code loaded}), how many entries it returned in all,
 * and the writes {@code storeAll} said it could not make.
 *
 * <p>What loadAll does in 2.3.8 ({@code WALReader.loadAllData} over
 * {@code DefaultReader}): lists the business path recursively for files
 * ending {@code wal.txt}, reads each whole file in turn (getFileStatus,
 * open, readFully of its length), deserializes every record (protostuff),
 * sorts them, and keeps the newest of each key, deserializing key and value.
 *
 * <p>Arguments ({@code --key value}): {@code --fs}, {@code --namespace},
 * {@code --cluster}, {@code --entries}, {@code --value-size},
 * {@code --hadoop}.
 */
public final class ImapLoadBench {
    private ImapLoadBench() {}

    static final int BATCH = 1000;

    public static void main(String[] argv) throws Exception {
        Args a = new Args(argv);
        int entries = a.getInt("entries", 50_000);
        int valueSize = a.getInt("value-size", 256);
        Map<String, Object> conf = new HashMap<>();
        conf.put("storage.type", "hdfs");
        conf.put("fs.defaultFS", a.get("fs", "file:///"));
        conf.put("namespace", a.get("namespace", "/tmp/seatunnel-imap-load"));
        conf.put("clusterName", a.get("cluster", "peers"));
        conf.put("businessName", "bench_load");
        conf.putAll(a.hadoop());
        try {
            run(conf, entries, valueSize);
        } catch (Throwable e) {
            e.printStackTrace();
            System.exit(1); // the storage's disruptor threads would keep the JVM up
        }
        System.exit(0);
    }

    static String key(int i) {
        return "job-" + (i % 64) + "-key-" + i;
    }

    static void run(Map<String, Object> conf, int entries, int valueSize) throws Exception {
        byte[] bytes = new byte[valueSize];
        Arrays.fill(bytes, (byte) 'v');
        ImapBench.Value value = new ImapBench.Value(bytes);
        IMapStorage writer = new IMapFileStorageFactory().create(conf);
        long failures = 0;
        Map<Object, Object> batch = new HashMap<>();
        for (int i = 0; i < entries; i++) {
            batch.put(key(i), value);
            if (batch.size() == BATCH || i == entries - 1) {
                Set<Object> failed = writer.storeAll(batch);
                if (failed != null) {
                    failures += failed.size();
                }
                batch.clear();
            }
        }
        writer.destroy(false);

        long start = System.nanoTime();
        IMapStorage fresh = new IMapFileStorageFactory().create(conf);
        long created = System.nanoTime();
        Map<Object, Object> all = fresh.loadAll();
        long end = System.nanoTime();

        // Count what the load really holds: a load that lacks entries is
        // reported ("loaded" below "entries"), never hidden.
        int loaded = 0;
        for (int i = 0; i < entries; i++) {
            if (all.get(key(i)) instanceof ImapBench.Value v && v.data != null && v.data.length == valueSize) {
                loaded++;
            }
        }
        long[] files = walFiles(conf);
        double secs = (end - start) / 1e9;
        System.out.printf(Locale.ROOT,
                "{\"system\":\"seatunnel\",\"workload\":\"imap-load\",\"entries\":%d,\"loaded\":%d,\"returned\":%d,\"store_failures\":%d,"
                        + "\"load_ms\":%.1f,\"loadall_ms\":%.1f,\"entries_per_sec\":%.1f,\"files\":%d,\"file_bytes\":%d}%n",
                entries, loaded, all.size(), failures, secs * 1e3, (end - created) / 1e6, loaded / secs, files[0], files[1]);
        fresh.destroy(false);
    }

    /** The WAL files under the namespace (the bench gives each run one of its own) and their bytes. */
    static long[] walFiles(Map<String, Object> conf) throws Exception {
        Configuration c = new Configuration();
        for (Map.Entry<String, Object> e : conf.entrySet()) {
            if (e.getKey().startsWith("seatunnel.hadoop.")) {
                c.set(e.getKey().substring("seatunnel.hadoop.".length()), String.valueOf(e.getValue()));
            }
        }
        String fsURI = String.valueOf(conf.get("fs.defaultFS"));
        FileSystem fs = FileSystem.newInstance(java.net.URI.create(fsURI), c);
        try {
            long n = 0;
            long bytes = 0;
            RemoteIterator<LocatedFileStatus> it = fs.listFiles(new Path(String.valueOf(conf.get("namespace"))), true);
            while (it.hasNext()) {
                LocatedFileStatus st = it.next();
                if (st.getPath().getName().endsWith("wal.txt")) {
                    n++;
                    bytes += st.getLen();
                }
            }
            return new long[] {n, bytes};
        } finally {
            fs.close();
        }
    }
}
