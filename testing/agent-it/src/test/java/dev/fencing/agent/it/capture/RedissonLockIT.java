package dev.fencing.agent.it.capture;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.it.AgentProcesses;
import dev.fencing.agent.it.AppStdin;
import dev.fencing.agent.it.apps.RedissonLockApp;
import dev.fencing.agent.it.jdbc.JdbcTakeoverIT;
import dev.fencing.fence.sql.SqlFence;
import dev.fencing.fence.sql.SqlFenceInstaller;
import dev.fencing.fence.sql.TableName;
import dev.fencing.testing.AgentJvm;
import dev.fencing.testing.Http;
import dev.fencing.testing.Ports;
import dev.fencing.testing.PostgresServer;
import dev.fencing.testing.RedisServer;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * An application taking its own Redisson {@code RFencedLock} on a real Redis, with the agent attached and no fencing
 * code: the agent captures the lock (its token: the one Redisson's script INCRed), the holder's writes carry it, the
 * watchdog's extensions keep it trusted, and a holder paused past its lease has its writes after resuming refused by
 * PostgreSQL's fence while the next holder's (a higher token) are accepted. {@code /status} says the token is not
 * linearizable.
 */
class RedissonLockIT {
  private static final String LOCK = "ledger";
  /** Redisson's lock watchdog timeout: the lease of a lock taken without a lease time, extended every third. */
  private static final int WATCHDOG_MS = 3000;

  static List<Path> javaHomes() {
    return AgentProcesses.javaHomes();
  }

  /** A forked app with the agent: capture only, no lease of the agent's own. */
  private static final class LockJvm implements AutoCloseable {
    final AgentJvm jvm;
    final int port = Ports.freePort();
    private final AppStdin stdin;

    LockJvm(Path javaHome, String name, String classpath, String... args) {
      jvm = AgentJvm.builder().javaHome(javaHome).name(name + "-java" + AgentProcesses.javaVersion(javaHome))
          .classpath(classpath).mainClass(RedissonLockApp.class.getName()).args(args)
          .agentArgs("lease.enabled=false,capture.safety-margin=300ms,http.port=" + port).start();
      stdin = AppStdin.jdbc(jvm);
      jvm.awaitOutput("APP STARTED", Duration.ofSeconds(30));
    }

    String run(String command) throws IOException {
      return stdin.run(command);
    }

    /** The captured lock's field {@code name} in /status (a flat object). */
    String captured(String name) {
      String status = Http.get("http://127.0.0.1:" + port + "/status");
      int list = status.indexOf("\"captured\":[{");
      assertThat(list).as("a captured lock in /status: " + status).isNotNegative();
      int from = status.indexOf('{', list);
      return Http.jsonField(status.substring(from, status.indexOf('}', from) + 1), name);
    }

    @Override
    public void close() {
      jvm.close();
    }
  }

  /** The jars testing/library-versions resolved for Redisson (with its Netty 4.1), as a class path. */
  private static String redissonJars() throws IOException {
    try (Stream<Path> jars = Files.list(AgentProcesses.libraryJars("redisson", "3.52.0"))) {
      return jars.map(Path::toString).filter(p -> p.endsWith(".jar")).sorted()
          .collect(Collectors.joining(File.pathSeparator));
    }
  }

  @ParameterizedTest
  @MethodSource("javaHomes")
  void aHolderPausedPastItsLeaseHasItsStaleWritesRefusedAndStatusSaysTheTokenIsNotLinearizable(Path javaHome)
      throws Exception {
    try (RedisServer redis = RedisServer.start(); PostgresServer pg = PostgresServer.start()) {
      String url = pg.jdbcUrl();
      try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement()) {
        s.execute("CREATE TABLE account (id INT PRIMARY KEY, balance INT NOT NULL)");
        s.execute("INSERT INTO account VALUES (1, 0)");
        new SqlFenceInstaller(c).install(new SqlFence(TableName.parse("account"), LOCK, false, false));
      }
      String cp = AgentProcesses.appClasspath() + File.pathSeparator + System.getProperty("fencing.it.postgresql.jar")
          + File.pathSeparator + redissonJars();
      String[] args = {redis.address(), Integer.toString(WATCHDOG_MS), LOCK, url};
      try (LockJvm a = new LockJvm(javaHome, "redisson-a", cp, args);
          LockJvm b = new LockJvm(javaHome, "redisson-b", cp, args)) {
        assertThat(a.run("SQL UPDATE account SET balance = 1 WHERE id = 1")).as("outside the lock: no token")
            .startsWith("ERR FN002");
        String answer = a.run("TOKEN");
        assertThat(answer).startsWith("OK token ");
        long tokenA = Long.parseLong(answer.substring("OK token ".length()));
        assertThat(a.captured("lock")).isEqualTo(LOCK);
        assertThat(a.captured("library")).isEqualTo("redisson");
        assertThat(a.captured("linearizable")).as("a Redis INCR is no linearizable token").isEqualTo("false");
        assertThat(a.captured("state")).isEqualTo("HOLDING");
        assertThat(Long.parseLong(a.captured("token"))).as("the token Redisson issued").isEqualTo(tokenA);
        assertThat(a.run("SQL UPDATE account SET balance = 100 WHERE id = 1")).isEqualTo("OK 1");
        Thread.sleep(WATCHDOG_MS + 500); // the watchdog's extensions keep the captured lock trusted past one lease
        assertThat(a.captured("state")).isEqualTo("HOLDING");
        assertThat(a.run("SQL UPDATE account SET balance = 101 WHERE id = 1")).isEqualTo("OK 1");

        a.jvm.suspend(); // inside its critical section, past its lease: Redis lets A's lock lapse
        answer = b.run("TOKEN");
        assertThat(answer).startsWith("OK token ");
        long tokenB = Long.parseLong(answer.substring("OK token ".length()));
        assertThat(tokenB).isGreaterThan(tokenA);
        assertThat(Long.parseLong(b.captured("token"))).isEqualTo(tokenB);
        assertThat(b.run("SQL UPDATE account SET balance = 200 WHERE id = 1")).isEqualTo("OK 1");

        a.jvm.resume();
        assertThat(a.run("SQL UPDATE account SET balance = 666 WHERE id = 1")).as("the resumed holder's write")
            .matches("ERR FN00[13].*");
        assertThat(a.captured("state")).isNotEqualTo("HOLDING");
        assertThat(JdbcTakeoverIT.query(url, "SELECT balance FROM account WHERE id = 1")).isEqualTo("200");
        assertThat(JdbcTakeoverIT.query(url, "SELECT token FROM fencing_fence WHERE lock_name = '" + LOCK + "'"))
            .isEqualTo(Long.toString(tokenB));

        assertThat(b.run("UNLOCK")).isEqualTo("OK unlocked");
        assertThat(b.captured("state")).isNotEqualTo("HOLDING");
        assertThat(b.run("SQL UPDATE account SET balance = 201 WHERE id = 1")).as("after release: outside the lock")
            .startsWith("ERR FN002");
        // lock() issues a token without returning it: the agent reads it, and the holder's writes carry it.
        assertThat(b.run("LOCK")).isEqualTo("OK locked");
        assertThat(Long.parseLong(b.captured("token"))).isGreaterThan(tokenB);
        assertThat(b.run("SQL UPDATE account SET balance = 300 WHERE id = 1")).isEqualTo("OK 1");
        assertThat(b.run("UNLOCK")).isEqualTo("OK unlocked");
      }
      assertThat(JdbcTakeoverIT.query(url, "SELECT balance FROM account WHERE id = 1")).isEqualTo("300");
    }
  }
}
