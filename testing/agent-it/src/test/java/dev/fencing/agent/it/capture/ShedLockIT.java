package dev.fencing.agent.it.capture;

import static dev.fencing.agent.it.Checks.awaitCount;
import static dev.fencing.agent.it.Checks.count;
import static dev.fencing.agent.it.Checks.strings;
import static dev.fencing.agent.it.SpringReplicas.awaitOutput;
import static dev.fencing.agent.it.SpringReplicas.schemaOfTheApp;
import static dev.fencing.agent.it.SpringReplicas.startBeside;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.it.AgentProcesses;
import dev.fencing.fence.sql.SqlFence;
import dev.fencing.fence.sql.SqlFenceInstaller;
import dev.fencing.fence.sql.TableName;
import dev.fencing.testing.EtcdCluster;
import dev.fencing.testing.Http;
import dev.fencing.testing.Ports;
import dev.fencing.testing.PostgresServer;
import dev.fencing.testing.SpringApp;
import dev.fencing.testing.ZooKeeperEnsemble;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * ShedLock users turn fencing on with one setting: the Spring Boot sample's profile "shedlock" (ShedLock's JDBC
 * provider on PostgreSQL, a {@code @Scheduled @SchedulerLock(name = "settle")} job writing one row per step to
 * {@code settle_row}, no fencing code) on two replicas with the agent ({@code fencing.shedlock.enabled=true}, real
 * etcd; ZooKeeper in {@link #onZooKeeperToo}) and the SQL fence on {@code settle_row} for lock {@code settle}. The replica running the job is frozen
 * (SIGSTOP) in the middle of a run, past its lease TTL and ShedLock's lockAtMostFor; the other replica's job takes
 * ShedLock's lock, then the agent's lock {@code settle} with a higher token, and writes; the frozen one resumes: its
 * writes after the successor's first are refused, the successor's land.
 */
class ShedLockIT {
  /**
   * The newest Java for etcd, this build's for ZooKeeper ({@link #onZooKeeperToo}): the ShedLock hook is woven on both
   * Javas, and which coordinator the agent's lock lives in is the agent's own logic, the same on every Java.
   */
  static List<Path> newestJava() {
    return AgentProcesses.newestJava();
  }

  @ParameterizedTest
  @MethodSource("newestJava")
  void aFrozenShedLockHoldersWritesAfterItsSuccessorsFirstAreRefused(Path javaHome) throws Exception {
    try (EtcdCluster etcd = EtcdCluster.single()) {
      frozenHolderIsOutTokened(javaHome, "etcd.endpoints=" + etcd.endpoints());
    }
  }

  /** The same with the agent's locks in ZooKeeper (the token: the czxid of the agent's lock node), on this JDK. */
  @Test
  void onZooKeeperToo() throws Exception {
    try (ZooKeeperEnsemble zk = ZooKeeperEnsemble.start(1)) {
      frozenHolderIsOutTokened(Path.of(System.getProperty("java.home")),
          "coordinator=zookeeper,zookeeper.connect=" + zk.connectString());
    }
  }

  private static void frozenHolderIsOutTokened(Path javaHome, String coordinator) throws Exception {
    try (PostgresServer pg = PostgresServer.start()) {
      String url = pg.jdbcUrl() + (pg.jdbcUrl().contains("?") ? "&" : "?") + "user=" + pg.user();
      try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement()) {
        s.execute(schemaOfTheApp());
        new SqlFenceInstaller(c).install(new SqlFence(TableName.parse("settle_row"), "settle", false, false));
      }
      int portA = Ports.freePort();
      int portB = Ports.freePort();
      String common = "shedlock.enabled=true,shedlock.wait=15s,lease.ttl=3s,lease.safety-margin=500ms," + coordinator;
      // A run: 25 rows, 100 ms apart (2.5 s); ShedLock's lock lasts at most 4 s. The older settlement job is off.
      String[] app = {"-Dspring.profiles.active=shedlock", "-Dapp.settlement.initial-delay-ms=86400000",
          "-Dapp.settle.steps=25", "-Dapp.settle.step-ms=100", "-Dapp.settle.lock-at-most-for=PT4S"};
      // Both replicas start at once (whichever takes ShedLock's lock first runs the job): one after the other, the
      // first one's job would run through several runs while the second one starts.
      CompletableFuture<SpringApp> startingB = CompletableFuture.supplyAsync(() -> SpringApp.start(javaHome,
          "replica-b", pg.jdbcUrl(), pg.user(), common + ",http.port=" + portB, Duration.ofSeconds(120), app));
      try (SpringApp a = startBeside(startingB, () -> SpringApp.start(javaHome, "replica-a", pg.jdbcUrl(), pg.user(),
              common + ",http.port=" + portA, Duration.ofSeconds(120), app));
          SpringApp b = startingB.join();
          Connection c = DriverManager.getConnection(url)) {
        awaitCount(c, "SELECT count(*) FROM settle_row", 3, Duration.ofSeconds(30));
        assertThat(count(c, "SELECT count(*) FROM settle_row WHERE token_seen IS NULL"))
            .as("every row of the job carries the token of the agent's lock 'settle'").isZero();

        // Freeze whichever replica runs the job, a few rows into a run.
        long[] row = awaitRowAtStep(c, 2, 5, Duration.ofSeconds(30));
        String holder = strings(c, "SELECT replica FROM settle_row WHERE id = " + row[0]).get(0);
        SpringApp frozen = holder.equals("replica-a") ? a : b;
        String successorName = frozen == a ? "replica-b" : "replica-a";
        int frozenPort = frozen == a ? portA : portB;
        int successorPort = frozen == a ? portB : portA;
        frozen.jvm().suspend();
        long frozenAt = System.nanoTime();
        long lastOfFrozen = count(c, "SELECT max(id) FROM settle_row WHERE replica = '" + holder + "'");
        long tokenOfFrozen = Long.parseLong(
            strings(c, "SELECT token_seen FROM settle_row WHERE id = " + lastOfFrozen).get(0));

        // The successor's job takes ShedLock's lock once lockAtMostFor ran out, then the agent's lock, and writes.
        awaitCount(c, "SELECT count(*) FROM settle_row WHERE replica = '" + successorName + "' AND id > "
            + lastOfFrozen, 1, Duration.ofSeconds(25));
        long firstOfSuccessor = count(c, "SELECT min(id) FROM settle_row WHERE replica = '" + successorName
            + "' AND id > " + lastOfFrozen);
        long tokenOfSuccessor = Long.parseLong(
            strings(c, "SELECT token_seen FROM settle_row WHERE id = " + firstOfSuccessor).get(0));
        System.out.printf("java %s, %s: %s frozen at row %d (token %d); %s's first row %d (token %d) %d ms later%n",
            AgentProcesses.javaVersion(javaHome), coordinator.startsWith("coordinator=zookeeper") ? "ZooKeeper" : "etcd", holder,
            lastOfFrozen, tokenOfFrozen, successorName,
            firstOfSuccessor, tokenOfSuccessor, (System.nanoTime() - frozenAt) / 1_000_000);
        assertThat(tokenOfSuccessor).as("the successor's token").isGreaterThan(tokenOfFrozen);

        frozen.jvm().resume();
        // The frozen run goes on where it stopped: its next write is refused (by the agent: the lease expired on its
        // monotonic clock, FN003; or by the fence: FN001), so the run fails and ShedLock ends it.
        awaitOutput(frozen, Pattern.compile("FN001|FN003"), Duration.ofSeconds(20));
        frozen.jvm().output().lines().filter(l -> l.contains("FN001") || l.contains("FN003")).findFirst()
            .ifPresent(l -> System.out.println("the resumed run's refusal: " + l));
        // The successor's run lands whole.
        awaitCount(c, "SELECT count(*) FROM settle_row WHERE replica = '" + successorName + "' AND id >= "
            + firstOfSuccessor, 25, Duration.ofSeconds(20));
        assertThat(count(c, "SELECT count(*) FROM settle_row WHERE replica = '" + holder + "' AND id > "
            + firstOfSuccessor + " AND token_seen = '" + tokenOfFrozen + "'"))
            .as("no write of the frozen run after the successor's first").isZero();
        assertThat(strings(c, "SELECT DISTINCT token_seen FROM settle_row WHERE replica = '" + successorName
            + "' AND id >= " + firstOfSuccessor + " AND id < " + firstOfSuccessor + " + 25"))
            .as("the successor's run carries its token").contains(Long.toString(tokenOfSuccessor));

        String status = Http.get("http://127.0.0.1:" + frozenPort + "/status");
        assertThat(status).as("/status lists ShedLock's lock").contains("\"library\":\"shedlock\"")
            .contains("\"lock\":\"settle\"");
        String metrics = Http.get("http://127.0.0.1:" + frozenPort + "/metrics");
        assertThat(metrics).as("the refused write is counted under lock settle").containsPattern(
            "fencing_(side_effects_blocked_total\\{channel=\"jdbc\",fenced=\"true\",lock=\"settle\""
                + "|rejections_total\\{channel=\"jdbc\",lock=\"settle\")[^}]*\\} [1-9]");
        assertThat(Http.get("http://127.0.0.1:" + successorPort + "/metrics")).containsPattern(
            "fencing_side_effects_total\\{channel=\"jdbc\",fenced=\"true\",lock=\"settle\",outcome=\"tagged\"\\} [1-9]");
      }
    }
  }

  /** Waits for a row written at a step in [from, to] of a run; returns its id and step. */
  private static long[] awaitRowAtStep(Connection c, int from, int to, Duration timeout) throws Exception {
    long deadline = System.nanoTime() + timeout.toNanos();
    long seen = count(c, "SELECT coalesce(max(id), 0) FROM settle_row");
    while (System.nanoTime() < deadline) {
      try (Statement s = c.createStatement();
          ResultSet r = s.executeQuery("SELECT id, step FROM settle_row WHERE id > " + seen
              + " ORDER BY id DESC LIMIT 1")) {
        if (r.next()) {
          int step = r.getInt(2);
          if (step >= from && step <= to) {
            return new long[] {r.getLong(1), step};
          }
        }
      }
      Thread.sleep(50);
    }
    throw new AssertionError("no row at a step in [" + from + ", " + to + "] within " + timeout);
  }
}
