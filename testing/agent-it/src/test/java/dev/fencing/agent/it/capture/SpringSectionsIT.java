package dev.fencing.agent.it.capture;

import dev.fencing.agent.it.AgentProcesses;

import static dev.fencing.agent.it.Checks.awaitCount;
import static dev.fencing.agent.it.Checks.awaitLock;
import static dev.fencing.agent.it.SpringReplicas.awaitOutput;
import static dev.fencing.agent.it.Checks.count;
import static dev.fencing.agent.it.SpringReplicas.schemaOfTheApp;
import static dev.fencing.agent.it.Checks.strings;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.fence.sql.SqlFence;
import dev.fencing.fence.sql.SqlFenceInstaller;
import dev.fencing.fence.sql.TableName;
import dev.fencing.testing.EtcdCluster;
import dev.fencing.testing.Http;
import dev.fencing.testing.Ports;
import dev.fencing.testing.PostgresServer;
import dev.fencing.testing.SpringApp;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Pattern;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The replicated Spring Boot sample (sample-apps/spring-replicas, no fencing code) on two replicas, the agent attached
 * to both with one declared section and no JVM-wide lock: {@code SettlementJob#settle@settlement}. Both replicas
 * start (Spring's SQL init writes at startup, also on the standby) and serve reads and writes the whole time; the
 * {@code @Scheduled} job runs on the holder of {@code settlement} only; the holder is frozen (SIGSTOP) in the middle
 * of a run, past the TTL; the other replica takes the job over with a higher token; the frozen one's write, made when
 * it resumes, is refused (by the agent or by the SQL fence on {@code settlement_run}), and nothing else of either
 * replica is refused.
 */
class SpringSectionsIT {
  private static final String SECTION = "dev.fencing.sample.spring.SettlementJob#settle@settlement";

  /**
   * On this build's Java: the same section of the same app runs on the newest Java in SpringTransactionsIT, and the
   * sections hook on both in SectionsIT; what this case adds (a Spring app's scheduler, its load, a handover) is the
   * app's and the agent's logic, the same on every Java.
   */
  static List<Path> currentJava() {
    return List.of(AgentProcesses.javaHomes().get(0));
  }

  @ParameterizedTest
  @MethodSource("currentJava")
  void bothReplicasServeTheJobRunsOnTheHolderAndAFrozenHoldersLateWriteIsRefused(Path javaHome) throws Exception {
    try (EtcdCluster etcd = EtcdCluster.single(); PostgresServer pg = PostgresServer.start()) {
      String url = pg.jdbcUrl() + (pg.jdbcUrl().contains("?") ? "&" : "?") + "user=" + pg.user();
      // The DBA's part: the app's own schema (the one its SQL init runs), then the fence on the job's table only.
      try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement()) {
        s.execute(schemaOfTheApp());
        new SqlFenceInstaller(c).install(new SqlFence(TableName.parse("settlement_run"), "settlement", false, false));
      }
      int portA = Ports.freePort();
      int portB = Ports.freePort();
      String common = "sections=" + SECTION + ",lease.ttl=3s,lease.safety-margin=500ms,etcd.endpoints="
          + etcd.endpoints();
      // A run of the job reads, works for 2 s, then writes: a freeze lands inside a run, as a GC pause would.
      String[] jobTiming = {"-Dapp.settlement.work-ms=2000", "-Dapp.settlement.interval-ms=100"};
      try (SpringApp a = SpringApp.start(javaHome, "replica-a", pg.jdbcUrl(), pg.user(), common + ",http.port=" + portA,
          Duration.ofSeconds(120), jobTiming)) {
        long tokenA = awaitLock(portA, "settlement", "HOLDING", Duration.ofSeconds(15));
        Load load = new Load(a);
        try (SpringApp b = SpringApp.start(javaHome, "replica-b", pg.jdbcUrl(), pg.user(),
            common + ",http.port=" + portB, Duration.ofSeconds(120), jobTiming)) {
          long bStarted = System.nanoTime();
          load.add(b);
          awaitLock(portB, "settlement", "STANDBY", Duration.ofSeconds(15));
          try (Connection c = DriverManager.getConnection(url)) {
            assertThat(strings(c, "SELECT replica FROM replica_start ORDER BY replica"))
                .as("both replicas ran Spring's SQL init at startup, the standby too")
                .containsExactly("replica-a", "replica-b");
            awaitCount(c, "SELECT count(*) FROM settlement_run", 2, Duration.ofSeconds(15));
            assertThat(strings(c, "SELECT DISTINCT replica || ':' || coalesce(token_seen, 'untagged') FROM settlement_run"))
                .as("the job runs on the holder only, with its token").containsExactly("replica-a:" + tokenA);
            // B's first run comes app.settlement.initial-delay-ms (500 ms) after its context refreshed, which can be
            // after the checks above: the two runs counted are A's, made while B started.
            long checkedAt = System.nanoTime();
            assertThat(awaitSkipped(portB, 0, Duration.ofSeconds(10))).as("the standby skips the job").isPositive();
            System.out.printf("java %s: B started %d ms before the skip check, its first skip counted %d ms after it%n",
                AgentProcesses.javaVersion(javaHome), (checkedAt - bStarted) / 1_000_000,
                (System.nanoTime() - checkedAt) / 1_000_000);

            // Freeze A in the middle of a run: just after one of its writes, the next run is in its 2 s of work.
            long last = awaitNewRow(c, "replica-a", Duration.ofSeconds(10));
            double skippedByA = skipped(portA);
            Thread.sleep(300);
            load.pause(a);
            a.jvm().suspend();
            long tokenB = awaitLock(portB, "settlement", "HOLDING", Duration.ofSeconds(3 + 5));
            assertThat(tokenB).as("the successor's token").isGreaterThan(tokenA);
            awaitCount(c, "SELECT count(*) FROM settlement_run WHERE replica = 'replica-b'", 1, Duration.ofSeconds(10));
            a.jvm().resume();
            load.resume(a);
            // The run A was frozen in writes when it wakes; that write is refused, and A's later runs are skipped.
            // Refused by PostgreSQL first here: the run's transaction was open through the freeze, and on a fenced
            // database the agent bounds an idle open transaction by about one TTL (25P03, connection closed), so
            // the successor was never held back by it; otherwise the agent (FN003) or the fence (FN001) refuses it.
            awaitOutput(a, Pattern.compile("FN001|FN003|25P03"), Duration.ofSeconds(20));
            // A run starts only when the one before it ended (fixed delay): a skip counted after the resume means the
            // frozen run is over, and every later run is skipped while B holds the lock.
            assertThat(awaitSkipped(portA, skippedByA, Duration.ofSeconds(10))).as("the resumed holder skips the job")
                .isGreaterThan(skippedByA);
            assertThat(count(c, "SELECT count(*) FROM settlement_run WHERE replica = 'replica-a' AND id > " + last))
                .as("no settlement row of the frozen holder after it resumed").isZero();
            assertThat(strings(c, "SELECT DISTINCT coalesce(token_seen, 'untagged') FROM settlement_run"
                + " WHERE replica = 'replica-b'")).as("the successor's runs carry its token")
                .containsExactly(Long.toString(tokenB));
          }
          // Both served every write of the load, before, during and after the handover.
          Thread.sleep(500);
          load.stop();
          assertThat(load.failures).as("requests of the load that did not get 201").isEmpty();
          assertThat(load.ok.get()).as("orders created").isGreaterThan(20);
          assertThat(a.postJson("/orders", "{\"item\":\"after\",\"quantity\":1}").statusCode()).isEqualTo(201);
          assertThat(b.postJson("/orders", "{\"item\":\"after\",\"quantity\":1}").statusCode()).isEqualTo(201);
        } finally {
          load.stop();
        }
      }
    }
  }

  /** POSTs an order to every replica every 50 ms, off the test's thread, and keeps what did not get 201. */
  static final class Load {
    final Map<SpringApp, Boolean> targets = new ConcurrentHashMap<>();
    final Map<String, String> failures = new ConcurrentHashMap<>();
    final AtomicInteger ok = new AtomicInteger();
    final AtomicBoolean running = new AtomicBoolean(true);
    final Thread thread;

    Load(SpringApp first) {
      targets.put(first, true);
      thread = new Thread(this::run, "order-load");
      thread.setDaemon(true);
      thread.start();
    }

    void add(SpringApp app) {
      targets.put(app, true);
    }

    void pause(SpringApp app) {
      targets.put(app, false);
    }

    void resume(SpringApp app) {
      targets.put(app, true);
    }

    void stop() throws InterruptedException {
      running.set(false);
      thread.join(15_000);
    }

    private void run() {
      int n = 0;
      while (running.get()) {
        for (Map.Entry<SpringApp, Boolean> t : targets.entrySet()) {
          if (!t.getValue()) {
            continue;
          }
          n++;
          try {
            HttpResponse<String> r = t.getKey().postJson("/orders", "{\"item\":\"load-" + n + "\",\"quantity\":1}");
            if (r.statusCode() == 201) {
              ok.incrementAndGet();
            } else if (targets.get(t.getKey())) {
              failures.put("load-" + n + " on port " + t.getKey().port(), r.statusCode() + " " + r.body());
            }
          } catch (RuntimeException e) {
            if (targets.get(t.getKey())) { // a request caught by the freeze is not the app's failure
              failures.put("load-" + n + " on port " + t.getKey().port(), e.toString());
            }
          }
        }
        try {
          Thread.sleep(50);
        } catch (InterruptedException e) {
          return;
        }
      }
    }
  }

  private static long awaitNewRow(Connection c, String replica, Duration timeout) throws Exception {
    String sql = "SELECT coalesce(max(id), 0) FROM settlement_run WHERE replica = '" + replica + "'";
    long before = count(c, sql);
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline) {
      long now = count(c, sql);
      if (now > before) {
        return now;
      }
      Thread.sleep(20);
    }
    throw new AssertionError("no new settlement row of " + replica + " within " + timeout);
  }

  /** The replica's count of skipped runs of the job. */
  private static double skipped(int port) {
    return metric(Http.get("http://127.0.0.1:" + port + "/metrics"), "fencing_section_skipped_total{lock=\"settlement\"}");
  }

  /** Polls the replica's count of skipped runs until it is above {@code above}; returns it (as it is, if not in time). */
  private static double awaitSkipped(int port, double above, Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      double skipped = skipped(port);
      if (skipped > above || System.nanoTime() > deadline) {
        return skipped;
      }
      Thread.sleep(50);
    }
  }

  /** The value of one series; a series that is missing fails (a renamed label must not read as 0). */
  private static double metric(String metrics, String series) {
    for (String line : metrics.split("\n")) {
      if (line.startsWith(series + " ")) {
        return Double.parseDouble(line.substring(series.length() + 1).trim());
      }
    }
    throw new AssertionError("no series " + series + " in /metrics:\n" + metrics);
  }
}
