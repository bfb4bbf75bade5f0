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
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A declared section whose transaction Spring's proxy opens before the section and commits after it returned
 * ({@code @Scheduled @Transactional} {@code SettlementJob#settle} of the Spring Boot sample, unmodified): the
 * transaction carries the section's scope to its end. Its JPA flush (Spring Data JPA, Hibernate: the INSERT leaves
 * during the commit) carries the section's token, and its commit is judged by the section's lock and grant: the valid
 * holder's work lands, with and without a JVM-wide lock on standby beside the section, and a holder frozen past its
 * TTL between the section's return and the commit commits nothing after its successor took over.
 */
class SpringTransactionsIT {
  private static final String SECTION = "dev.fencing.sample.spring.SettlementJob#settle@settlement";

  /** Each variant once: sections only on Java 17, a JVM-wide lock on standby beside the section on Java 25. */
  static Stream<Arguments> variants() {
    List<Path> homes = AgentProcesses.javaHomes();
    return Stream.of(Arguments.of(homes.get(0), false), Arguments.of(homes.get(homes.size() - 1), true));
  }

  @ParameterizedTest(name = "JVM-wide lock on standby: {1}, {0}")
  @MethodSource("variants")
  void aHeldSectionsTransactionCarriesItsTokenThroughTheFlushAndTheCommit(Path javaHome, boolean jvmLockOnStandby)
      throws Exception {
    try (EtcdCluster etcd = EtcdCluster.single(); PostgresServer pg = PostgresServer.start()) {
      String url = pg.jdbcUrl() + (pg.jdbcUrl().contains("?") ? "&" : "?") + "user=" + pg.user();
      // The DBA's part: the app's schema, the fence on the JPA table only (settlement_run stays unfenced: its
      // JdbcTemplate insert, made inside the section, is an unjudged write whose commit the agent judges).
      try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement()) {
        s.execute(schemaOfTheApp());
        new SqlFenceInstaller(c).install(new SqlFence(TableName.parse("settlement_entry"), "settlement", false, false));
      }
      String agentArgs = "sections=" + SECTION + ",etcd.endpoints=" + etcd.endpoints();
      AgentProcesses.Agent webHolder = jvmLockOnStandby
          ? AgentProcesses.start(javaHome, "web-holder", "lock=web,etcd.endpoints=" + etcd.endpoints()) : null;
      try {
        if (webHolder != null) {
          webHolder.awaitState("HOLDING", Duration.ofSeconds(15));
          agentArgs += ",lock=web";
        }
        int port = Ports.freePort();
        try (SpringApp app = SpringApp.start(javaHome, "replica-a", pg.jdbcUrl(), pg.user(),
            agentArgs + ",http.port=" + port, Duration.ofSeconds(120), "-Dapp.settlement.store=jdbc,jpa",
            "-Dapp.settlement.interval-ms=200", "-Dspring.sql.init.mode=never")) {
          long token = awaitLock(port, "settlement", "HOLDING", Duration.ofSeconds(15));
          if (webHolder != null) {
            Http.awaitStatus(port, "\"lock\":\"web\",\"state\":\"STANDBY\"", Duration.ofSeconds(15));
          }
          try (Connection c = DriverManager.getConnection(url)) {
            awaitCount(c, "SELECT count(*) FROM settlement_entry", 3, Duration.ofSeconds(20));
            awaitCount(c, "SELECT count(*) FROM settlement_run", 3, Duration.ofSeconds(5));
            assertThat(strings(c, "SELECT DISTINCT coalesce(token_seen, 'untagged') FROM settlement_entry"))
                .as("the runs' JPA inserts, sent at the flush after the section returned").containsExactly("" + token);
            assertThat(strings(c, "SELECT DISTINCT coalesce(token_seen, 'untagged') FROM settlement_run"))
                .as("the runs' JdbcTemplate inserts, committed after the section returned")
                .containsExactly("" + token);
          }
          assertThat(app.jvm().output()).doesNotContain("Fencing Agent blocked").doesNotContain("FN002");
        }
      } finally {
        if (webHolder != null) {
          webHolder.close();
        }
      }
    }
  }

  /** The agent's own logic (which scope judges a flush and a commit), the same on every Java: on the newest. */
  static Stream<Arguments> stores() {
    Path newest = AgentProcesses.newestJava().get(0);
    return Stream.of(Arguments.of(newest, "jdbc"), Arguments.of(newest, "jpa"));
  }

  @ParameterizedTest(name = "store {1}, {0}")
  @MethodSource("stores")
  void aHolderFrozenBetweenItsSectionAndItsCommitCommitsNothingAfterItsSuccessorTookOver(Path javaHome, String store)
      throws Exception {
    String table = store.equals("jpa") ? "settlement_entry" : "settlement_run";
    try (EtcdCluster etcd = EtcdCluster.single(); PostgresServer pg = PostgresServer.start()) {
      String url = pg.jdbcUrl() + (pg.jdbcUrl().contains("?") ? "&" : "?") + "user=" + pg.user();
      try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement()) {
        s.execute(schemaOfTheApp()); // no fence: the job writes to an unfenced destination, which only the agent guards
      }
      String common = "sections=" + SECTION + ",lease.ttl=3s,lease.safety-margin=500ms,etcd.endpoints="
          + etcd.endpoints();
      // Each run's transaction takes 1.5 s to commit after the section returned (a before-commit callback).
      String[] job = {"-Dapp.settlement.store=" + store, "-Dapp.settlement.commit-delay-ms=1500",
          "-Dapp.settlement.interval-ms=100"};
      int portA = Ports.freePort();
      int portB = Ports.freePort();
      try (SpringApp a = SpringApp.start(javaHome, "replica-a", pg.jdbcUrl(), pg.user(),
          common + ",http.port=" + portA, Duration.ofSeconds(120), job)) {
        long tokenA = awaitLock(portA, "settlement", "HOLDING", Duration.ofSeconds(15));
        try (SpringApp b = SpringApp.start(javaHome, "replica-b", pg.jdbcUrl(), pg.user(),
            common + ",http.port=" + portB, Duration.ofSeconds(120), job);
            Connection c = DriverManager.getConnection(url)) {
          awaitLock(portB, "settlement", "STANDBY", Duration.ofSeconds(15));
          awaitCount(c, "SELECT count(*) FROM " + table + " WHERE replica = 'replica-a'", 1, Duration.ofSeconds(15));

          // Freeze A as a run's section has returned and its transaction waits to commit.
          awaitNextCommit(a, Duration.ofSeconds(10));
          a.jvm().suspend();
          long lastA = count(c, "SELECT coalesce(max(id), 0) FROM " + table + " WHERE replica = 'replica-a'");
          long tokenB = awaitLock(portB, "settlement", "HOLDING", Duration.ofSeconds(3 + 5));
          assertThat(tokenB).as("the successor's token").isGreaterThan(tokenA);
          awaitCount(c, "SELECT count(*) FROM " + table + " WHERE replica = 'replica-b'", 1, Duration.ofSeconds(10));
          a.jvm().resume();

          // The frozen run's commit (JdbcTemplate) or flush (JPA) is refused by the agent, and A's later runs skip.
          // The rest of the run's 1.5 s before its commit, and a margin:
          Thread.sleep(3000);
          assertThat(count(c, "SELECT count(*) FROM " + table + " WHERE replica = 'replica-a' AND id > " + lastA))
              .as("rows the frozen holder committed after it resumed").isZero();
          awaitOutput(a, Pattern.compile("Fencing Agent blocked"), Duration.ofSeconds(20));
          assertThat(strings(c, "SELECT DISTINCT replica FROM " + table + " WHERE id > " + lastA))
              .as("after the freeze only the successor settles").containsExactly("replica-b");
        }
      }
    }
  }

  /** Waits for the next "settlement run N committing" line of {@code app} (one printed after this call). */
  private static void awaitNextCommit(SpringApp app, Duration timeout) throws InterruptedException {
    Pattern committing = Pattern.compile("settlement run (\\d+) committing");
    int before = occurrences(committing, app.jvm().output());
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline) {
      if (occurrences(committing, app.jvm().output()) > before) {
        return;
      }
      Thread.sleep(5);
    }
    throw new AssertionError("no new 'settlement run N committing' of " + app.jvm() + " within " + timeout);
  }

  private static int occurrences(Pattern p, String text) {
    Matcher m = p.matcher(text);
    int n = 0;
    while (m.find()) {
      n++;
    }
    return n;
  }
}
