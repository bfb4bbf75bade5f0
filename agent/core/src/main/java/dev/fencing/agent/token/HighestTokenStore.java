package dev.fencing.agent.token;

import dev.fencing.agent.log.AgentLog;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Properties;

/**
 * Keeps the highest token seen for a lock (and the etcd cluster id it came from) in {@code fencing.state.dir}, so a
 * restarted agent still recognises token reuse. Without a directory it keeps nothing.
 */
public final class HighestTokenStore {
  private static final AgentLog LOG = AgentLog.get(HighestTokenStore.class);

  /** What is kept per lock. */
  public static final class Record {
    final long token;
    final long clusterId;

    public Record(long token, long clusterId) {
      this.token = token;
      this.clusterId = clusterId;
    }
  }

  private final Path file;

  private HighestTokenStore(Path file) {
    this.file = file;
  }

  public static HighestTokenStore none() {
    return new HighestTokenStore(null);
  }

  public static HighestTokenStore in(Path dir, String lock) {
    return dir == null ? none() : new HighestTokenStore(dir.resolve(lock + ".token"));
  }

  Record load() {
    if (file == null || !Files.exists(file)) {
      return null;
    }
    Properties p = new Properties();
    try (var r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
      p.load(r);
      return new Record(Long.parseLong(p.getProperty("highestToken", "0").trim()),
          Long.parseUnsignedLong(p.getProperty("clusterId", "0").trim(), 16));
    } catch (IOException | RuntimeException e) {
      LOG.error("cannot read the highest token seen from " + file + "; token reuse across restarts is not detected", e);
      return null;
    }
  }

  void save(Record r) {
    if (file == null) {
      return;
    }
    try {
      Files.createDirectories(file.getParent());
      Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
      String text = "# Fencing Agent: highest fencing token seen for this lock\nhighestToken=" + r.token
          + "\nclusterId=" + Long.toHexString(r.clusterId) + "\n";
      Files.write(tmp, text.getBytes(StandardCharsets.UTF_8));
      Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    } catch (IOException e) {
      LOG.error("cannot persist the highest token seen to " + file, e);
    }
  }
}
