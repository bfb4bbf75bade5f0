package dev.fencing.agent.it.jdbc;

import dev.fencing.agent.it.AgentProcesses;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.it.jdbc.JdbcIT.JdbcJvm;
import dev.fencing.fence.sql.SqlFence;
import dev.fencing.fence.sql.SqlFenceInstaller;
import dev.fencing.fence.sql.TableName;
import dev.fencing.testing.EtcdCluster;
import dev.fencing.testing.Http;
import dev.fencing.testing.PgBouncer;
import dev.fencing.testing.PostgresServer;
import java.io.File;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Behind PgBouncer in transaction mode with one server connection, every client's transactions share one PostgreSQL
 * session, so a session setting made by one client is seen by the next. Two writers with the agent contend for the
 * lock; the holder is frozen past its TTL, the other takes over and writes, the frozen one resumes and keeps writing.
 * Not one of its rows may land after the successor's first: the session must never lend it the successor's token.
 * PgBouncer reaches PostgreSQL over TCP, or over its Unix socket (where PostgreSQL sees no port at all); the agent
 * runs with the default {@code fencing.jdbc.pooler=auto}.
 */
class JdbcPoolerIT {
  /**
   * Each (writers, backend) once: autocommit writers over TCP on the newest Java, the others on this build's (which
   * session carries which token behind the pooler is the agent's own logic, the same on every Java).
   */
  static List<Arguments> cases() {
    List<Arguments> out = new ArrayList<>();
    Path first = AgentProcesses.javaHomes().get(0);
    // autocommit writes: the agent gives each a transaction of its own
    out.add(Arguments.of("auto", PgBouncer.Backend.TCP, AgentProcesses.newestJava().get(0)));
    out.add(Arguments.of("txn", PgBouncer.Backend.TCP, first)); // the application's own transactions
    out.add(Arguments.of("auto", PgBouncer.Backend.UNIX_SOCKET, first));
    out.add(Arguments.of("txn", PgBouncer.Backend.UNIX_SOCKET, first));
    return out;
  }

  @ParameterizedTest(name = "{0} writers, PgBouncer to PostgreSQL over {1}, on {2}")
  @MethodSource("cases")
  void aResumedHolderNeverWritesWithItsSuccessorsTokenBehindATransactionPooler(String mode, PgBouncer.Backend backend,
      Path javaHome) throws Exception {
    try (EtcdCluster etcd = EtcdCluster.single(); PostgresServer pg = PostgresServer.start();
        PgBouncer bouncer = PgBouncer.start(pg, "transaction", backend, 1)) {
      try (Connection c = DriverManager.getConnection(pg.jdbcUrl()); Statement s = c.createStatement()) {
        // Each row keeps the token its writing statement carried, read from the session as the fence does.
        s.execute("CREATE TABLE cell (id bigserial PRIMARY KEY, writer text NOT NULL,"
            + " token bigint DEFAULT nullif(current_setting('fencing.token', true), '')::bigint)");
        new SqlFenceInstaller(c).install(new SqlFence(TableName.parse("cell"), "pool", false, false));
      }
      String args = "lock=pool,lease.ttl=3s,lease.safety-margin=500ms,etcd.endpoints=" + etcd.endpoints();
      String cp = AgentProcesses.appClasspath() + File.pathSeparator + System.getProperty("fencing.it.postgresql.jar");
      String url = bouncer.jdbcUrl("postgres", "postgres");
      String insert = " 10 INSERT INTO cell (writer) VALUES ('%s')";
      try (JdbcJvm a = new JdbcJvm(javaHome, "pooler-a", args, url, cp)) {
        long tokenA = Long.parseLong(Http.jsonField(
            Http.awaitStatus(a.port, "\"state\":\"HOLDING\"", Duration.ofSeconds(15)), "token"));
        assertThat(a.run("BG " + mode + String.format(insert, "a"))).isEqualTo("OK started");
        try (JdbcJvm b = new JdbcJvm(javaHome, "pooler-b", args, url, cp)) {
          Http.awaitStatus(b.port, "\"state\":\"STANDBY\"", Duration.ofSeconds(15));
          assertThat(b.run("BG " + mode + String.format(insert, "b"))).isEqualTo("OK started");
          Thread.sleep(500);

          a.jvm.suspend(); // a long GC pause, perhaps inside one of its transactions
          long tokenB = Long.parseLong(Http.jsonField(
              Http.awaitStatus(b.port, "\"state\":\"HOLDING\"", Duration.ofSeconds(10)), "token"));
          assertThat(tokenB).isGreaterThan(tokenA);
          awaitRows(pg, "b", 20, Duration.ofSeconds(10)); // the successor writes through the shared session
          a.jvm.resume();
          Thread.sleep(1500); // the resumed holder writes on, its agent knows its lease has expired

          String stoppedA = a.run("STOP");
          String stoppedB = b.run("STOP");
          long firstB = Long.parseLong(JdbcTakeoverIT.query(pg.jdbcUrl(), "SELECT min(id) FROM cell WHERE writer = 'b'"));
          String aAfter = JdbcTakeoverIT.query(pg.jdbcUrl(),
              "SELECT count(*) FROM cell WHERE writer = 'a' AND id > " + firstB);
          assertThat(aAfter).as("rows of the resumed holder after the successor's first (A: %s, B: %s)", stoppedA,
              stoppedB).isEqualTo("0");
          assertThat(JdbcTakeoverIT.query(pg.jdbcUrl(), "SELECT count(*) FROM cell WHERE writer = 'a' AND token <> "
              + tokenA)).as("rows of A with another token than A's").isEqualTo("0");
          assertThat(JdbcTakeoverIT.query(pg.jdbcUrl(), "SELECT count(*) FROM cell WHERE writer = 'b' AND token <> "
              + tokenB)).as("rows of B with another token than B's").isEqualTo("0");
          assertThat(JdbcTakeoverIT.query(pg.jdbcUrl(), "SELECT count(*) FROM cell WHERE writer = 'a'"))
              .as("A wrote while it held the lock").isNotEqualTo("0");
          // After resuming, A's writes went out with its own token and the fence refused them.
          assertThat(stoppedA).contains("FN001");
          assertThat(Http.get("http://127.0.0.1:" + a.port + "/metrics"))
              .containsPattern("fencing_rejections_total\\{channel=\"jdbc\",lock=\"pool\",reason=\"stale_token\"} [1-9]");
        }
      }
    }
  }

  /**
   * {@code fencing.jdbc.pooler=auto} tells connections apart by what they do, not by a port: a direct connection and
   * one through a plain TCP proxy on another port (the server process the driver was told of at connect runs its
   * statements) keep the pair in the session after an autocommit write; one through PgBouncer over PostgreSQL's Unix
   * socket (no port to read) gets it per transaction only, and the agent says why.
   */
  @ParameterizedTest
  @MethodSource("firstJava")
  void autoKeepsThePairPerConnectionOnlyWhereTheConnectionIsProvenDirect(Path javaHome) throws Exception {
    try (EtcdCluster etcd = EtcdCluster.single(); PostgresServer pg = PostgresServer.start();
        PgBouncer bouncer = PgBouncer.start(pg, "transaction", PgBouncer.Backend.UNIX_SOCKET, 1);
        dev.fencing.testing.TcpProxy proxy = new dev.fencing.testing.TcpProxy(pg.port())) {
      try (Connection c = DriverManager.getConnection(pg.jdbcUrl()); Statement s = c.createStatement()) {
        s.execute("CREATE TABLE cell (id bigserial PRIMARY KEY, writer text NOT NULL)");
        new SqlFenceInstaller(c).install(new SqlFence(TableName.parse("cell"), "pool", false, false));
      }
      String args = "lock=pool,etcd.endpoints=" + etcd.endpoints();
      String cp = AgentProcesses.appClasspath() + File.pathSeparator + System.getProperty("fencing.it.postgresql.jar");
      String pair = "QUERY SELECT coalesce(nullif(current_setting('fencing.token', true), ''), 'none')";
      String[][] cases = {{"direct", pg.jdbcUrl()},
          {"proxy", pg.jdbcUrl().replace(":" + pg.port() + "/", ":" + proxy.port() + "/")},
          {"pgbouncer", bouncer.jdbcUrl("postgres", "postgres")}};
      for (String[] k : cases) {
        if (!k[0].equals("direct")) {
          assertThat(k[1]).as(k[0] + " URL").isNotEqualTo(pg.jdbcUrl());
        }
        try (JdbcJvm app = new JdbcJvm(javaHome, "pooler-auto-" + k[0], args, k[1], cp)) {
          String token = Http.jsonField(Http.awaitStatus(app.port, "\"state\":\"HOLDING\"", Duration.ofSeconds(15)),
              "token");
          assertThat(app.run("SQL INSERT INTO cell (writer) VALUES ('" + k[0] + "')")).isEqualTo("OK 1");
          if (k[0].equals("pgbouncer")) {
            assertThat(app.run(pair)).as("per transaction: gone with it").isEqualTo("ROW none");
            assertThat(app.jvm.output()).contains("not proven direct");
          } else {
            assertThat(app.run(pair)).as(k[0] + ": per connection").isEqualTo("ROW " + token);
            assertThat(app.jvm.output()).doesNotContain("not proven direct");
          }
        }
      }
      assertThat(proxy.forwarded()).as("the proxy case went through the proxy").isPositive();
      assertThat(JdbcTakeoverIT.query(pg.jdbcUrl(), "SELECT string_agg(writer, ',' ORDER BY id) FROM cell"))
          .isEqualTo("direct,proxy,pgbouncer");
    }
  }

  /**
   * Behind a transaction pooler the hook gives an autocommit write a transaction of its own, to carry the pair; a
   * statement PostgreSQL runs only outside a transaction block ({@code CREATE INDEX CONCURRENTLY}, {@code VACUUM}, a
   * Flyway migration with {@code executeInTransaction=false}) goes as it is instead, on a database with a fence or
   * without one, while the lease is held; after its deadline it is blocked like every write no fence judges.
   */
  @ParameterizedTest
  @MethodSource("firstJava")
  void statementsThatRunOnlyOutsideATransactionWorkBehindATransactionPooler(Path javaHome) throws Exception {
    try (EtcdCluster etcd = EtcdCluster.single(); PostgresServer pg = PostgresServer.start();
        PgBouncer bouncer = PgBouncer.start(pg, "transaction", PgBouncer.Backend.TCP, 1)) {
      try (Connection c = DriverManager.getConnection(pg.jdbcUrl()); Statement s = c.createStatement()) {
        s.execute("CREATE DATABASE plain");
        s.execute("CREATE TABLE cell (id bigserial PRIMARY KEY, writer text NOT NULL)");
        new SqlFenceInstaller(c).install(new SqlFence(TableName.parse("cell"), "pool", false, false));
      }
      try (Connection c = DriverManager.getConnection(pg.jdbcUrl("plain")); Statement s = c.createStatement()) {
        s.execute("CREATE TABLE cell (id bigserial PRIMARY KEY, writer text NOT NULL)");
      }
      // etcd is gone when the apps close: shutdown.timeout=0s, no wait for a release that cannot land.
      String args = "lock=pool,lease.ttl=3s,lease.safety-margin=500ms,shutdown.timeout=0s,etcd.endpoints="
          + etcd.endpoints();
      String cp = AgentProcesses.appClasspath() + File.pathSeparator + System.getProperty("fencing.it.postgresql.jar");
      try (JdbcJvm fenced = new JdbcJvm(javaHome, "pooler-ddl-fenced", args, bouncer.jdbcUrl("postgres", "postgres"),
              cp);
          JdbcJvm plain = new JdbcJvm(javaHome, "pooler-ddl-plain", args.replace("lock=pool", "lock=plain"),
              bouncer.jdbcUrl("plain", "postgres"), cp)) {
        Http.awaitStatus(fenced.port, "\"state\":\"HOLDING\"", Duration.ofSeconds(15));
        Http.awaitStatus(plain.port, "\"state\":\"HOLDING\"", Duration.ofSeconds(15));
        for (JdbcJvm app : List.of(fenced, plain)) {
          assertThat(app.run("SQL INSERT INTO cell (writer) VALUES ('w')")).isEqualTo("OK 1");
          assertThat(app.run("SQL CREATE INDEX CONCURRENTLY cell_writer ON cell (writer)")).isEqualTo("OK 0");
          assertThat(app.run("SQL REINDEX TABLE CONCURRENTLY cell")).isEqualTo("OK 0");
          assertThat(app.run("SQL VACUUM cell")).isEqualTo("OK 0");
          assertThat(app.run("SQL DROP INDEX CONCURRENTLY cell_writer")).isEqualTo("OK 0");
        }
        assertThat(fenced.run("SQL INSERT INTO cell (writer) VALUES ('w')")).as("still tagged").isEqualTo("OK 1");

        for (dev.fencing.testing.EtcdNode n : etcd.nodes()) {
          n.kill(); // the lease runs out
        }
        Http.awaitStatus(fenced.port, "\"state\":\"EXPIRED\"", Duration.ofSeconds(10));
        assertThat(fenced.run("SQL VACUUM cell")).as("after the deadline: unjudged, blocked").startsWith("ERR FN003");
        assertThat(fenced.run("SQL CREATE INDEX CONCURRENTLY cell_late ON cell (writer)")).startsWith("ERR FN003");
      }
      assertThat(JdbcTakeoverIT.query(pg.jdbcUrl(), "SELECT count(*) FROM pg_indexes WHERE indexname = 'cell_late'"))
          .isEqualTo("0");
    }
  }

  static List<Path> firstJava() {
    return List.of(AgentProcesses.javaHomes().get(0));
  }

  private static void awaitRows(PostgresServer pg, String writer, int rows, Duration timeout) throws Exception {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (Long.parseLong(JdbcTakeoverIT.query(pg.jdbcUrl(),
        "SELECT count(*) FROM cell WHERE writer = '" + writer + "'")) < rows) {
      assertThat(System.nanoTime() - deadline).as("%d rows of %s within %s", rows, writer, timeout).isNegative();
      Thread.sleep(100);
    }
  }
}
