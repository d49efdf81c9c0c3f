package stowage.peers;

import java.util.HashMap;
import java.util.Map;

/** The harness's {@code --key value} arguments. */
final class Args {
    private final Map<String, String> values = new HashMap<>();

    Args(String[] args) {
        for (int i = 0; i < args.length; i += 2) {
            if (!args[i].startsWith("--") || i + 1 >= args.length) {
                throw new IllegalArgumentException("expected --key value, got " + args[i]);
            }
            values.put(args[i].substring(2), args[i + 1]);
        }
    }

    String get(String key, String def) {
        return values.getOrDefault(key, def);
    }

    int getInt(String key, int def) {
        String v = values.get(key);
        return v == null ? def : Integer.parseInt(v);
    }

    /** The comma-separated {@code key=value} Hadoop settings of {@code --hadoop}, as the plugin's {@code seatunnel.hadoop.} properties. */
    Map<String, String> hadoop() {
        Map<String, String> out = new HashMap<>();
        for (String kv : get("hadoop", "").split(",")) {
            int eq = kv.indexOf('=');
            if (eq > 0) {
                out.put("seatunnel.hadoop." + kv.substring(0, eq).trim(), kv.substring(eq + 1).trim());
            }
        }
        return out;
    }
}
