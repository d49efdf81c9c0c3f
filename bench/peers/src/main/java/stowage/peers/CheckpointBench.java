package stowage.peers;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import org.apache.seatunnel.engine.checkpoint.storage.PipelineState;
import org.apache.seatunnel.engine.checkpoint.storage.api.CheckpointStorage;
import org.apache.seatunnel.engine.checkpoint.storage.hdfs.HdfsStorageFactory;

/**
 * Runs the checkpoint workloads of {@code stowage bench --peers} against
 * SeaTunnel's checkpoint-storage-hdfs plugin and prints one JSON line per
 * workload on stdout.
 *
 * <p>Arguments (all {@code --key value}): {@code --fs} the file system URI
 * ({@code file:///} or {@code hdfs://host:port}), {@code --namespace} the
 * plugin's namespace (an absolute path ending in "/"), {@code --round} a
 * tag that keeps job ids of rounds apart, {@code --stores} checkpoints per
 * store workload, {@code --sizes} comma-separated state sizes in bytes,
 * {@code --checkpoints} checkpoints of the job for the latest lookup and
 * the delete, {@code --lookups} latest lookups measured, {@code --hadoop}
 * comma-separated Hadoop settings {@code key=value} handed to the plugin
 * (as its {@code seatunnel.hadoop.} properties).
 */
public final class CheckpointBench {
    private CheckpointBench() {}

    public static void main(String[] args) throws Exception {
        Map<String, String> a = new HashMap<>();
        for (int i = 0; i + 1 < args.length; i += 2) {
            if (!args[i].startsWith("--")) {
                throw new IllegalArgumentException("expected --key value, got " + args[i]);
            }
            a.put(args[i].substring(2), args[i + 1]);
        }
        String fs = a.getOrDefault("fs", "file:///");
        String namespace = a.getOrDefault("namespace", "/tmp/seatunnel-peers/");
        String round = a.getOrDefault("round", "0");
        int stores = Integer.parseInt(a.getOrDefault("stores", "100"));
        int checkpoints = Integer.parseInt(a.getOrDefault("checkpoints", "1000"));
        int lookups = Integer.parseInt(a.getOrDefault("lookups", "21"));
        String[] sizes = a.getOrDefault("sizes", "1048576,16384").split(",");

        Map<String, String> conf = new HashMap<>();
        conf.put("storage.type", "hdfs");
        conf.put("fs.defaultFS", fs);
        conf.put("namespace", namespace);
        for (String kv : a.getOrDefault("hadoop", "").split(",")) {
            int eq = kv.indexOf('=');
            if (eq > 0) {
                conf.put("seatunnel.hadoop." + kv.substring(0, eq).trim(), kv.substring(eq + 1).trim());
            }
        }
        CheckpointStorage storage = new HdfsStorageFactory().create(conf);

        // Warm-up, so that class loading and the first compilations fall
        // outside the measurements.
        byte[] small = fill(4096);
        String warm = "warm-" + round;
        for (int i = 1; i <= 50; i++) {
            storage.storeCheckPoint(state(warm, 1, i, small));
        }
        storage.getLatestCheckpointByJobIdAndPipelineId(warm, "1");
        storage.deleteCheckpoint(warm);

        for (String sz : sizes) {
            int size = Integer.parseInt(sz.trim());
            byte[] data = fill(size);
            String job = "store-" + size + "-" + round;
            long[] took = new long[stores];
            long start = System.nanoTime();
            for (int i = 0; i < stores; i++) {
                long t = System.nanoTime();
                storage.storeCheckPoint(state(job, 1, i + 1, data));
                took[i] = System.nanoTime() - t;
            }
            long total = System.nanoTime() - start;
            emit("store", Map.of(
                    "state_bytes", size,
                    "count", stores,
                    "per_sec", stores / (total / 1e9),
                    "median_ns", quantile(took, 0.5),
                    "p90_ns", quantile(took, 0.9)));
            storage.deleteCheckpoint(job);
        }

        String job = "latest-" + round;
        byte[] data = fill(4096);
        for (int i = 1; i <= checkpoints; i++) {
            storage.storeCheckPoint(state(job, 1, i, data));
        }
        long[] took = new long[lookups];
        for (int i = 0; i < lookups; i++) {
            long t = System.nanoTime();
            PipelineState st = storage.getLatestCheckpointByJobIdAndPipelineId(job, "1");
            took[i] = System.nanoTime() - t;
            if (st == null || st.getCheckpointId() != checkpoints) {
                throw new IllegalStateException("latest of " + checkpoints + " checkpoints: got "
                        + (st == null ? "none" : Long.toString(st.getCheckpointId())));
            }
        }
        emit("latest", Map.of("checkpoints", checkpoints, "count", lookups,
                "median_ns", quantile(took, 0.5), "p90_ns", quantile(took, 0.9)));

        long t = System.nanoTime();
        storage.deleteCheckpoint(job);
        long del = System.nanoTime() - t;
        if (!storage.getAllCheckpoints(job).isEmpty()) {
            throw new IllegalStateException("job " + job + " still has checkpoints after its deletion");
        }
        emit("delete", Map.of("checkpoints", checkpoints, "count", 1, "median_ns", del));
    }

    private static PipelineState state(String job, int pipeline, long id, byte[] data) {
        return PipelineState.builder().jobId(job).pipelineId(pipeline).checkpointId(id).states(data).build();
    }

    private static byte[] fill(int n) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (i * 7);
        }
        return b;
    }

    private static long quantile(long[] xs, double q) {
        long[] s = xs.clone();
        Arrays.sort(s);
        return s[Math.min(s.length - 1, (int) (q * s.length))];
    }

    private static void emit(String workload, Map<String, ? extends Number> fields) {
        StringBuilder b = new StringBuilder();
        b.append("{\"system\":\"seatunnel-2.3.8\",\"workload\":\"").append(workload).append('"');
        List<String> keys = new ArrayList<>(fields.keySet());
        keys.sort(null);
        for (String k : keys) {
            Number v = fields.get(k);
            b.append(",\"").append(k).append("\":");
            if (v instanceof Double d) {
                b.append(String.format(Locale.ROOT, "%.3f", d));
            } else {
                b.append(v);
            }
        }
        b.append('}');
        System.out.println(b);
        System.out.flush();
    }
}
