package dev.fencing.faults;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.testing.PgBouncer;
import dev.fencing.testing.PostgresServer;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The fault harness with {@code --pooler}: the workers reach PostgreSQL through a real PgBouncer in transaction
 * pooling mode with fewer server connections than workers, so database sessions are shared between them. A short
 * run (2 trials: a freeze and a partition of the holder, about 20 s) shows the run starts, writes through the pooler
 * and ends with its summary line; the long runs are {@code scripts/faults.sh N --pooler} (RELIABILITY.md).
 */
class FaultsPoolerSmokeIT {

  /**
   * What the checker's pg token relies on behind a transaction pooler: the token column's default reads the
   * setting in the writing transaction, so a transaction-local pair ({@code set_config(..., true)}) is what the row
   * records, and it is gone for the next client of the same backend. A session-scope pair is not: it stays on the
   * backend for whichever client comes next (what a per-connection memory of "this session carries the pair" misses).
   */
  @Test
  void theTokenColumnSeesATransactionLocalPairAndASessionPairOutlivesItsClient() throws SQLException {
    try (PostgresServer pg = PostgresServer.start(); PgBouncer bouncer = PgBouncer.start(pg, 1, pg.user())) {
      try (Connection c = DriverManager.getConnection(pg.jdbcUrl()); Statement s = c.createStatement()) {
        s.execute("CREATE TABLE t (id bigserial PRIMARY KEY, who text NOT NULL, token bigint DEFAULT"
            + " nullif(current_setting('fencing.token', true), '')::bigint, backend int NOT NULL DEFAULT"
            + " pg_backend_pid())");
      }
      String url = bouncer.jdbcUrl("postgres", pg.user());
      try (Connection a = DriverManager.getConnection(url); Connection b = DriverManager.getConnection(url);
          Statement sa = a.createStatement(); Statement sb = b.createStatement()) {
        a.setAutoCommit(false);
        sa.execute("SELECT set_config('fencing.token', '42', true)");
        sa.execute("INSERT INTO t (who) VALUES ('a, transaction-local 42')");
        a.commit();
        sb.execute("INSERT INTO t (who) VALUES ('b, nothing set')");
        sa.execute("SELECT set_config('fencing.token', '5', false)");
        sa.execute("INSERT INTO t (who) VALUES ('a, session 5')");
        a.commit();
        sb.execute("INSERT INTO t (who) VALUES ('b, nothing set, after a session pair')");
      }
      try (Connection c = DriverManager.getConnection(pg.jdbcUrl()); Statement s = c.createStatement();
          ResultSet r = s.executeQuery("SELECT who, token, backend FROM t ORDER BY id")) {
        StringBuilder rows = new StringBuilder();
        java.util.Set<Integer> backends = new java.util.HashSet<>();
        while (r.next()) {
          rows.append(r.getString(1)).append('=').append(r.getObject(2)).append(';');
          backends.add(r.getInt(3));
        }
        assertThat(rows.toString()).isEqualTo("a, transaction-local 42=42;b, nothing set=null;a, session 5=5;"
            + "b, nothing set, after a session pair=5;");
        assertThat(backends).as("one server connection for both clients").hasSize(1);
      }
    }
  }

  /** One short pooler run for the tests below (2 trials: a freeze and a partition of the holder). */
  private static FaultRun.Outcome run;

  @BeforeAll
  static void runTwoTrialsThroughThePooler() {
    FaultRun.Options options = new FaultRun.Options(2, Long.getLong("fencing.faults.seed", 20261201L), 3,
        FaultRun.Options.defaultAgentJar(), null, FaultRun.Options.DEFAULT_POOL_SIZE);
    run = FaultRun.run(options, System.out);
  }

  @Test
  void aPoolerRunWritesThroughPgBouncerAndEndsWithItsSummaryLine() {
    assertThat(run.summary()).matches("trials=2 stale_accepted=\\d+ lost=\\d+ blocked=\\d+ rejected=\\d+"
        + " unfenced_stale=\\d+ unfenced_writes=\\d+"
        + " pooler=pgbouncer-transaction pool_size=2");
    assertThat(run.faults()).containsOnlyKeys(FaultRun.Fault.PAUSE, FaultRun.Fault.PARTITION);
    assertThat(run.notes()).as("liveness, harness, pooler counters").noneMatch(n -> n.startsWith("liveness")
        || n.startsWith("harness") || n.startsWith("cannot"));
    FaultRun.PoolerReport pooler = run.pooler();
    assertThat(pooler).isNotNull();
    assertThat(pooler.mode()).isEqualTo("transaction");
    // The three workers were PgBouncer's clients, over at most two server connections...
    assertThat(pooler.clients()).as(pooler.describe()).isGreaterThanOrEqualTo(3);
    assertThat(pooler.serverConnections()).as(pooler.describe()).isBetween(1, 2);
    assertThat(pooler.transactions()).as(pooler.describe()).isPositive();
    // ...and PostgreSQL saw it so: the accepted rows came from PgBouncer's server connections, shared between workers.
    // Over the run there can be more backends than the pool's size: PostgreSQL ends the backend of a frozen holder's
    // open transaction after idle_in_transaction_session_timeout (the agent sets it to the TTL), and PgBouncer opens
    // another; never more than two at once (above).
    assertThat(pooler.backends()).as(pooler.describe()).isPositive();
    assertThat(pooler.backendsOfThePooler()).as(pooler.describe()).isEqualTo(pooler.backends());
    assertThat(pooler.sharedBackends()).as(pooler.describe()).isPositive();
    assertThat(run.result().blocked()).isPositive();
  }

  /**
   * The safety verdict behind the pooler. Before the JDBC hook set the pair per transaction (main at 6789368), it
   * remembered per client connection that its session carried (lock, token), set with session scope: behind a
   * transaction pooler the next transaction could run on another backend, whose session carried another worker's
   * pair, and a stale holder's write was then accepted under the new holder's token (rule 5 of the checker; 5 to
   * 23 such writes in this 2-trial run).
   */
  @Test
  void noStaleWriteIsAcceptedAndNoAcknowledgedWriteIsLostBehindThePooler() {
    HistoryChecker.Result result = run.result();
    assertThat(result.summary()).as(String.join("\n", result.violations())).contains("stale_accepted=0 lost=0")
        .contains(" unfenced_stale=0 ");
    assertThat(result.violations()).as("history in " + run.outDir()).isEmpty();
    assertThat(result.rejected()).isPositive();
  }
}
