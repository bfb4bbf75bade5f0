package dev.fencing.agent.it.jdbc;

import dev.fencing.agent.it.AgentProcesses;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.it.jdbc.JdbcIT.JdbcJvm;
import dev.fencing.agent.it.jdbc.JdbcTakeoverIT.Database;
import dev.fencing.fence.sql.SqlFence;
import dev.fencing.fence.sql.SqlFenceInstaller;
import dev.fencing.fence.sql.TableName;
import dev.fencing.testing.EtcdCluster;
import dev.fencing.testing.EtcdNode;
import dev.fencing.testing.Http;
import java.io.File;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * After the lease's deadline, nothing may leave toward a database that no fence will judge. A fence protects tables:
 * in a database where {@code account} is fenced and {@code audit} is not, the holder whose lease expired still sends
 * its writes to {@code account} (with its last token: the fence decides) but none to {@code audit}, no DDL, no
 * statement whose target the hook cannot see, no write hidden in a SELECT of a declared function, and no commit that
 * would make an earlier unjudged write visible. Real PostgreSQL and MariaDB, the real agent jar, real etcd; the lease
 * expires because etcd goes away.
 */
class JdbcExpiryIT {
  /**
   * etcd is gone when a case closes its app: no release at shutdown can reach it, and waiting the default 2 s for one
   * would only slow the run.
   */
  private static final String ARGS = "lock=ledger,lease.ttl=3s,lease.safety-margin=500ms,shutdown.timeout=0s,"
      + "jdbc.write-functions=bump_audit,etcd.endpoints=";

  private static String classpath(String kind) {
    return AgentProcesses.appClasspath() + File.pathSeparator
        + System.getProperty(kind.equals("postgresql") ? "fencing.it.postgresql.jar" : "fencing.it.mariadb.jar");
  }

  private static void schema(Database db, String kind) throws Exception {
    try (Connection c = DriverManager.getConnection(db.url()); Statement s = c.createStatement()) {
      s.execute("CREATE TABLE account (id INT PRIMARY KEY, balance INT NOT NULL)");
      s.execute("CREATE TABLE audit (note VARCHAR(64))"); // not fenced: an outbox, a log
      s.execute("INSERT INTO account VALUES (1, 0), (2, 0)");
      if (kind.equals("postgresql")) {
        s.execute("CREATE FUNCTION bump_audit() RETURNS int LANGUAGE sql AS"
            + " $$ INSERT INTO audit VALUES ('function'); SELECT 1 $$");
      } else {
        s.execute("CREATE FUNCTION bump_audit() RETURNS INT MODIFIES SQL DATA"
            + " BEGIN INSERT INTO audit VALUES ('function'); RETURN 1; END");
      }
      new SqlFenceInstaller(c).install(new SqlFence(TableName.parse("account"), "ledger", false, false));
    }
  }

  private static void expire(EtcdCluster etcd, JdbcJvm app) {
    for (EtcdNode n : etcd.nodes()) {
      n.kill();
    }
    Http.awaitStatus(app.port, "\"state\":\"EXPIRED\"", Duration.ofSeconds(10));
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"postgresql", "mariadb"})
  void afterTheDeadlineOnlyWritesAFenceJudgesAreSent(String kind) throws Exception {
    Path javaHome = AgentProcesses.javaHomes().get(0);
    try (EtcdCluster etcd = EtcdCluster.single(); Database db = JdbcTakeoverIT.start(kind)) {
      schema(db, kind);
      try (JdbcJvm app = new JdbcJvm(javaHome, "expiry-" + kind, ARGS + etcd.endpoints(), db.url(), classpath(kind))) {
        Http.awaitStatus(app.port, "\"state\":\"HOLDING\"", Duration.ofSeconds(15));
        assertThat(app.run("SQL INSERT INTO audit VALUES ('holding')")).isEqualTo("OK 1");
        assertThat(app.run("QUERY SELECT bump_audit()")).isEqualTo("ROW 1");
        expire(etcd, app);

        // The fenced table still gets the write, with the last token: the fence decides (no successor yet: admitted).
        assertThat(app.run("SQL UPDATE account SET balance = 1 WHERE id = 1")).isEqualTo("OK 1");
        assertThat(app.run("PREP UPDATE account SET balance = 2 WHERE id = 1")).isEqualTo("OK 1");
        // Everything no fence judges is blocked before it leaves the JVM.
        assertThat(app.run("SQL INSERT INTO audit VALUES ('stale')")).startsWith("ERR FN003");
        assertThat(app.run("PREP INSERT INTO audit VALUES ('stale')")).startsWith("ERR FN003");
        assertThat(app.run("SQL CREATE TABLE later (a INT)")).startsWith("ERR FN003");
        assertThat(app.run("QUERY SELECT bump_audit()")).startsWith("ERR FN003"); // declared as writing
        assertThat(app.run("BATCH INSERT INTO audit VALUES ('stale');UPDATE account SET balance = 3 WHERE id = 1"))
            .startsWith("ERR FN003");
        assertThat(app.run("SQL UPDATE account SET balance = 3 WHERE id = 1; INSERT INTO audit VALUES ('multi')"))
            .startsWith("ERR FN003"); // several statements in one text: no single target a fence judges
        // A write to the fenced table that calls a declared write function: the function writes audit even where
        // no account row changes, which account's fence does not judge.
        assertThat(app.run("SQL UPDATE account SET balance = balance WHERE bump_audit() = 0")).startsWith("ERR FN003");
        if (kind.equals("mariadb")) {
          // A multi-table UPDATE names account first but writes audit only.
          assertThat(app.run("SQL UPDATE account JOIN audit ON audit.note = 'holding' SET audit.note = 'joined'"))
              .startsWith("ERR FN003");
        }
        if (kind.equals("mariadb")) {
          assertThat(app.run("SQL TRUNCATE account")).startsWith("ERR FN003"); // MariaDB fires no trigger on TRUNCATE
        } else {
          // pgjdbc's CopyManager writes without a Statement: COPY into the fenced table is sent (its fence judges
          // it), COPY into the unfenced one is blocked.
          assertThat(app.run("COPYIN COPY account (id, balance) FROM STDIN|3\t3")).isEqualTo("OK 1");
          assertThat(app.run("COPYIN COPY audit (note) FROM STDIN|copied")).startsWith("ERR FN003");
        }
        assertThat(JdbcTakeoverIT.query(db.url(), "SELECT count(*) FROM audit")).isEqualTo("2");
        assertThat(JdbcTakeoverIT.query(db.url(), "SELECT count(*) FROM audit WHERE note = 'holding'")).isEqualTo("1");
        assertThat(JdbcTakeoverIT.query(db.url(), "SELECT count(*) FROM account"))
            .isEqualTo(kind.equals("mariadb") ? "2" : "3");
        assertThat(Http.get("http://127.0.0.1:" + app.port + "/metrics"))
            .contains("fencing_side_effects_total{channel=\"jdbc\",fenced=\"false\",lock=\"ledger\",outcome=\"blocked\"} "
                + (kind.equals("mariadb") ? "9.0" : "8.0"));
      }
    }
  }

  /**
   * Schema per tenant: {@code tenant_a.account} is fenced, {@code tenant_b.account} is not. A connection that starts
   * in tenant_a and switches to tenant_b ({@code SET search_path} or {@code setSchema} on PostgreSQL, {@code USE} or
   * {@code setCatalog} on MariaDB) writes its unqualified {@code account} to tenant_b's: after the deadline that write
   * is one no fence judges, and is blocked; tenant_a's is still sent with the last token.
   */
  @ParameterizedTest(name = "{0} by {1}")
  @CsvSource({"postgresql, SQL SET search_path TO tenant_b", "postgresql, SCHEMA tenant_b",
      "postgresql, PREP SET search_path TO tenant_b", "mariadb, SQL USE tenant_b", "mariadb, CATALOG tenant_b"})
  void aWriteAfterASchemaSwitchIsJudgedWhereItLands(String kind, String switchTo) throws Exception {
    Path javaHome = AgentProcesses.javaHomes().get(0);
    try (EtcdCluster etcd = EtcdCluster.single(); Database db = JdbcTakeoverIT.start(kind)) {
      String url;
      try (Connection c = DriverManager.getConnection(db.url()); Statement s = c.createStatement()) {
        for (String tenant : List.of("tenant_a", "tenant_b")) {
          s.execute((kind.equals("postgresql") ? "CREATE SCHEMA " : "CREATE DATABASE ") + tenant);
          s.execute("CREATE TABLE " + tenant + ".account (id INT PRIMARY KEY, balance INT NOT NULL)");
          s.execute("INSERT INTO " + tenant + ".account VALUES (1, 0)");
        }
        new SqlFenceInstaller(c).install(new SqlFence(TableName.parse("tenant_a.account"), "ledger", false, false));
        url = kind.equals("postgresql") ? db.url() + "&currentSchema=tenant_a"
            : db.url().replaceFirst("/[A-Za-z_]+\\?", "/tenant_a?");
      }
      try (JdbcJvm app = new JdbcJvm(javaHome, "schema-" + kind, ARGS + etcd.endpoints(), url, classpath(kind))) {
        Http.awaitStatus(app.port, "\"state\":\"HOLDING\"", Duration.ofSeconds(15));
        assertThat(app.run("SQL UPDATE account SET balance = 1 WHERE id = 1")).isEqualTo("OK 1"); // tenant_a's
        assertThat(app.run(switchTo)).startsWith("OK");
        assertThat(app.run("SQL UPDATE account SET balance = 1 WHERE id = 1")).isEqualTo("OK 1"); // tenant_b's
        expire(etcd, app);

        assertThat(app.run("SQL UPDATE account SET balance = 666 WHERE id = 1")).as("tenant_b's: no fence")
            .startsWith("ERR FN003");
        assertThat(app.run("SQL UPDATE tenant_a.account SET balance = 2 WHERE id = 1")).as("fenced: sent")
            .isEqualTo("OK 1");
      }
      assertThat(JdbcTakeoverIT.query(db.url(), "SELECT balance FROM tenant_b.account WHERE id = 1")).isEqualTo("1");
      assertThat(JdbcTakeoverIT.query(db.url(), "SELECT balance FROM tenant_a.account WHERE id = 1")).isEqualTo("2");
    }
  }

  @ParameterizedTest(name = "{0} by {1}")
  @CsvSource({"postgresql, COMMIT", "postgresql, AUTOCOMMIT", "postgresql, SQL COMMIT", "mariadb, COMMIT"})
  void aCommitAfterTheDeadlineDoesNotMakeUnjudgedWritesVisible(String kind, String commit) throws Exception {
    Path javaHome = AgentProcesses.javaHomes().get(0);
    try (EtcdCluster etcd = EtcdCluster.single(); Database db = JdbcTakeoverIT.start(kind)) {
      schema(db, kind);
      try (JdbcJvm app = new JdbcJvm(javaHome, "commit-" + kind, ARGS + etcd.endpoints(), db.url(), classpath(kind))) {
        Http.awaitStatus(app.port, "\"state\":\"HOLDING\"", Duration.ofSeconds(15));
        // Fenced writes alone: the fence admitted them in order, the commit may follow the deadline.
        assertThat(app.run("BEGIN")).isEqualTo("OK begun");
        assertThat(app.run("SQL UPDATE account SET balance = 10 WHERE id = 1")).isEqualTo("OK 1");
        assertThat(app.run("COMMIT")).isEqualTo("OK committed");
        // A transaction that wrote where no fence judges, still open at the deadline.
        assertThat(app.run("SQL INSERT INTO audit VALUES ('before the deadline')")).isEqualTo("OK 1");
        assertThat(app.run("SQL UPDATE account SET balance = 20 WHERE id = 1")).isEqualTo("OK 1");
        expire(etcd, app);

        assertThat(app.run(commit)).startsWith("ERR FN003");
        assertThat(JdbcTakeoverIT.query(db.url(), "SELECT count(*) FROM audit")).isEqualTo("0");
        assertThat(JdbcTakeoverIT.query(db.url(), "SELECT balance FROM account WHERE id = 1")).isEqualTo("10");
      }
    }
  }

  /** A frozen holder's open transaction holds the fence; its session is ended after about one TTL of idling. */
  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"postgresql", "mariadb"})
  void aFrozenHoldersOpenTransactionHoldsItsSuccessorBackForAboutOneTtl(String kind) throws Exception {
    Path javaHome = AgentProcesses.javaHomes().get(0);
    try (EtcdCluster etcd = EtcdCluster.single(); Database db = JdbcTakeoverIT.start(kind)) {
      schema(db, kind);
      String args = "lock=ledger,lease.ttl=3s,lease.safety-margin=500ms,etcd.endpoints=" + etcd.endpoints();
      try (JdbcJvm a = new JdbcJvm(javaHome, "open-a-" + kind, args, db.url(), classpath(kind))) {
        Http.awaitStatus(a.port, "\"state\":\"HOLDING\"", Duration.ofSeconds(15));
        try (JdbcJvm b = new JdbcJvm(javaHome, "open-b-" + kind, args, db.url(), classpath(kind))) {
          Http.awaitStatus(b.port, "\"state\":\"STANDBY\"", Duration.ofSeconds(15));
          assertThat(a.run("BEGIN")).isEqualTo("OK begun");
          assertThat(a.run("SQL UPDATE account SET balance = 100 WHERE id = 1")).isEqualTo("OK 1");
          a.jvm.suspend(); // frozen with its transaction open: it holds the fence's lock and the row
          Thread resumer = new Thread(() -> {
            try {
              Thread.sleep(20_000);
            } catch (InterruptedException e) {
              return;
            }
            a.jvm.resume(); // only if the successor is still held back by then
          });
          resumer.start();
          try {
            Http.awaitStatus(b.port, "\"state\":\"HOLDING\"", Duration.ofSeconds(10));
            String answer = b.run("TIMED UPDATE account SET balance = 200 WHERE id = 1");
            assertThat(answer).startsWith("OK 1 ");
            long waited = Long.parseLong(answer.substring("OK 1 ".length()));
            System.out.printf("[open transaction] %s: the successor's first write waited %d ms behind the frozen"
                + " holder's open transaction (TTL 3 s)%n", kind, waited);
            assertThat(waited).as("the successor's wait behind a frozen holder, in ms").isLessThanOrEqualTo(4_000);
          } finally {
            resumer.interrupt();
            a.jvm.resume();
          }
          // The stale transaction cannot commit any more: the database ended its session.
          assertThat(a.run("COMMIT")).startsWith("ERR");
          assertThat(JdbcTakeoverIT.query(db.url(), "SELECT balance FROM account WHERE id = 1")).isEqualTo("200");
        }
      }
    }
  }

  /** On a fenced database even a read must not carry a token the session no longer vouches for. */
  @Test
  void aReadAfterTheDeadlineClearsTheSessionsToken() throws Exception {
    Path javaHome = AgentProcesses.javaHomes().get(0);
    try (EtcdCluster etcd = EtcdCluster.single(); Database db = JdbcTakeoverIT.start("postgresql")) {
      schema(db, "postgresql");
      try (JdbcJvm app = new JdbcJvm(javaHome, "read-clears", ARGS + etcd.endpoints(), db.url(),
          classpath("postgresql"))) {
        String token = Http.jsonField(Http.awaitStatus(app.port, "\"state\":\"HOLDING\"", Duration.ofSeconds(15)),
            "token");
        assertThat(app.run("SQL UPDATE account SET balance = 1 WHERE id = 1")).isEqualTo("OK 1");
        assertThat(app.run("QUERY SELECT current_setting('fencing.token', true)")).isEqualTo("ROW " + token);
        assertThat(app.run("QUERY SELECT current_setting('fencing.grant', true)")).matches("ROW [0-9a-f]{1,16}");
        expire(etcd, app);
        assertThat(app.run("QUERY SELECT current_setting('fencing.token', true)")).isEqualTo("ROW ");
      }
    }
  }
}
