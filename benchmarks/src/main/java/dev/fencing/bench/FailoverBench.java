package dev.fencing.bench;

import dev.fencing.fence.sql.SqlFence;
import dev.fencing.fence.sql.SqlFenceInstaller;
import dev.fencing.fence.sql.TableName;
import dev.fencing.testing.AgentJvm;
import dev.fencing.testing.EtcdCluster;
import dev.fencing.testing.PostgresServer;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Failover time: two JVMs with the agent write to a fenced PostgreSQL table every 2 ms (LoadApp failover); the holder
 * is frozen with SIGSTOP (a long GC pause), and the time runs until the standby's first write the fence accepted.
 * Both clocks are {@code System.nanoTime()}: CLOCK_MONOTONIC, one clock for every process on Linux. The pause is
 * timed just before the {@code kill -STOP} is spawned, so the result is an upper bound by the few ms that takes.
 *
 * <p>Usage: FailoverBench &lt;agent jar&gt; &lt;trials per TTL&gt; &lt;java home&gt; &lt;TTL seconds&gt;...
 */
public final class FailoverBench {
  private static final Pattern ACCEPTED = Pattern.compile("accepted (\\d+)");

  private FailoverBench() {}

  public static void main(String[] args) throws Exception {
    Path agentJar = Path.of(args[0]);
    int trials = Integer.parseInt(args[1]);
    Path javaHome = Path.of(args[2]);
    String cp = LoadBench.Launcher.appClassPath();
    try (EtcdCluster etcd = EtcdCluster.single(); PostgresServer pg = PostgresServer.start()) {
      etcd.start();
      List<String> rows = new ArrayList<>();
      for (int i = 3; i < args.length; i++) {
        int ttl = Integer.parseInt(args[i]);
        String lock = "failover-" + ttl;
        String table = "failover_" + ttl;
        try (Connection c = DriverManager.getConnection(pg.jdbcUrl()); Statement s = c.createStatement()) {
          s.execute("CREATE TABLE " + table + " (id INT PRIMARY KEY, v BIGINT NOT NULL)");
          s.execute("INSERT INTO " + table + " VALUES (1, 0)");
          new SqlFenceInstaller(c).install(new SqlFence(TableName.parse(table), lock, false, false));
        }
        // The safety margin must stay below half the TTL (ConfigKey): 500 ms for 2 s, the 1 s default above.
        String options = "lock=" + lock + ",etcd.endpoints=" + etcd.endpoints() + ",lease.ttl=" + ttl + "s"
            + (ttl < 3 ? ",lease.safety-margin=500ms" : "");
        double[] ms = new double[trials];
        for (int t = 0; t < trials; t++) {
          long began = System.nanoTime();
          ms[t] = trial(javaHome, agentJar, cp, options, pg.jdbcUrl(), table, ttl, t);
          System.err.printf(Locale.ROOT, "  TTL %d s, trial %d: %.0f ms (the trial took %.1f s)%n", ttl, t + 1, ms[t],
              (System.nanoTime() - began) / 1e9);
        }
        double[] sorted = ms.clone();
        java.util.Arrays.sort(sorted);
        rows.add(String.format(Locale.ROOT, "| %d | %d | %.0f | %.0f | %.0f | %d | %s |", ttl, trials, sorted[0],
            sorted[trials / 2], sorted[trials - 1], ttl * 1000 + 1000,
            sorted[trials - 1] <= ttl * 1000 + 1000 ? "met" : "**missed**"));
      }
      System.out.println("Failover: holder frozen (SIGSTOP) to the standby's first write accepted by the PostgreSQL"
          + " fence:");
      System.out.println("| TTL (s) | trials | min (ms) | median (ms) | max (ms) | target ≤ TTL + 1 s (ms) | |");
      System.out.println("|---:|---:|---:|---:|---:|---:|---|");
      rows.forEach(System.out::println);
    }
  }

  private static double trial(Path javaHome, Path agentJar, String cp, String options, String url, String table,
      int ttl, int trial) {
    AgentJvm.Builder b = AgentJvm.builder().javaHome(javaHome).agentJar(agentJar).agentArgs(options).classpath(cp)
        .mainClass(LoadApp.class.getName()).args("failover", url, table);
    long t0 = System.nanoTime();
    try (AgentJvm holder = b.name("holder-" + ttl + "-" + trial).start()) {
      holder.awaitOutput("accepted ", Duration.ofSeconds(30));
      System.err.printf("    holder writing after %.1f s%n", (System.nanoTime() - t0) / 1e9);
      try (AgentJvm standby = b.name("standby-" + ttl + "-" + trial).start()) {
        // Blocked by its own agent (FN003): campaigning, not holding.
        standby.awaitOutput("refused FN003", Duration.ofSeconds(30));
        System.err.printf("    standby refused after %.1f s%n", (System.nanoTime() - t0) / 1e9);
        Thread.sleep(500 + (long) (Math.random() * 1000)); // the pause lands anywhere between two keepalives
        long paused = System.nanoTime();
        holder.suspend();
        Matcher m = ACCEPTED.matcher(standby.awaitOutput("accepted ", Duration.ofSeconds(ttl + 30L)));
        if (!m.find()) {
          throw new IllegalStateException("no accepted line: " + standby.output());
        }
        return (Long.parseLong(m.group(1)) - paused) / 1e6;
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
