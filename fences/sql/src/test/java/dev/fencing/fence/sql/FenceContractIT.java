package dev.fencing.fence.sql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.fence.store.SqlDialect;
import dev.fencing.protocol.SqlStates;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * What every dialect's fence must do, against a real database: the installer round trip, the acceptance rule for
 * every kind of write, missing and malformed tokens, permissive and per-row mode. Subclasses bring the database and
 * the dialect's way of setting the session values. Each test works on its own table and lock.
 */
abstract class FenceContractIT {

  private static final AtomicInteger NAMES = new AtomicInteger();

  abstract Connection connect() throws SQLException;

  /** Sets the session values; a null token or lock leaves that value unset, a String is set verbatim. */
  abstract void session(Connection c, String lock, Object token) throws SQLException;

  abstract SqlDialect dialect();

  /** Sets the session's grant id (PostgreSQL fencing.grant, else @fencing_grant); null unsets it. */
  abstract void grant(Connection c, String grant) throws SQLException;

  /** A fresh table name and lock name for one test. */
  record Names(String table, String lock) {
  }

  Names names() {
    int n = NAMES.incrementAndGet();
    return new Names("orders_" + n + "_" + System.nanoTime() % 100000, "ledger-" + n);
  }

  void createTable(Connection c, String table) throws SQLException {
    exec(c, "CREATE TABLE " + table + " (id INT PRIMARY KEY, amount INT NOT NULL)");
  }

  @Test
  void installerRoundTrip() throws Exception {
    Names n = names();
    try (Connection c = connect()) {
      createTable(c, n.table());
      boolean fencedBefore = SqlFenceInstaller.isFenced(c);
      SqlFence fence = new SqlFence(TableName.parse(n.table()), n.lock(), false, false);
      SqlFenceInstaller installer = new SqlFenceInstaller(c);
      assertThat(installer.print(fence)).contains(SqlFenceDdl.FENCE_TABLE).containsIgnoringCase("CREATE TRIGGER");
      assertThat(new SqlFenceDdl(dialect()).forPrint(fence)).containsIgnoringCase("CREATE TRIGGER");

      assertThat(installer.install(fence).summary()).startsWith("installed:");
      assertThat(SqlFenceInstaller.isFenced(c)).isTrue();
      assertThat(installer.install(fence).summary()).startsWith("already installed:");
      assertThat(triggerCount(c, n.table())).isEqualTo(new SqlFenceDdl(dialect()).triggerNames(fence).size());
      assertThatThrownBy(() -> insert(c, n.table(), 1, 10)).satisfies(e -> assertState(e, SqlStates.MISSING_TOKEN));

      // Other options replace the triggers rather than adding to them.
      SqlFence permissive = new SqlFence(fence.table(), n.lock(), false, true);
      assertThat(installer.install(permissive).summary()).startsWith("installed:");
      assertThat(triggerCount(c, n.table())).isEqualTo(new SqlFenceDdl(dialect()).triggerNames(permissive).size());
      insert(c, n.table(), 1, 10);

      assertThat(installer.uninstall(fence.table()).summary()).startsWith("removed:");
      assertThat(triggerCount(c, n.table())).isZero();
      assertThat(installer.uninstall(fence.table()).summary()).contains("nothing to remove");
      // Unfenced again: writes without any session values pass.
      insert(c, n.table(), 2, 20);
      update(c, n.table(), 1, 11);
      delete(c, n.table(), 2);
      if (!fencedBefore) {
        assertThat(SqlFenceInstaller.isFenced(c)).as("fence table dropped with the last fenced table").isFalse();
      }
    }
  }

  /**
   * The fence objects live beside the table, and go when the last fenced table of the schema is uninstalled, so
   * that the database no longer counts as fenced. Per-row mode here, to cover the token column too.
   */
  @Test
  void uninstallingTheLastFencedTableOfASchemaRemovesTheFenceObjects() throws Exception {
    Names n = names();
    String schema = "rt_" + n.table();
    try (Connection c = connect()) {
      exec(c, "CREATE SCHEMA " + schema);
      try {
        createTable(c, schema + ".a");
        createTable(c, schema + ".b");
        SqlFenceInstaller installer = new SqlFenceInstaller(c);
        installer.install(new SqlFence(TableName.parse(schema + ".a"), n.lock(), false, false));
        installer.install(new SqlFence(TableName.parse(schema + ".b"), n.lock(), true, false));
        int objects = fenceObjects(c, schema);
        assertThat(objects).isGreaterThan(0);
        session(c, n.lock(), 5L);
        insert(c, schema + ".a", 1, 1);
        insert(c, schema + ".b", 1, 1);

        assertThat(installer.uninstall(TableName.parse(schema + ".b")).summary()).doesNotContain("dropped too");
        assertThat(fenceObjects(c, schema)).isEqualTo(objects);
        assertThat(installer.uninstall(TableName.parse(schema + ".a")).summary()).contains("dropped too");
        assertThat(fenceObjects(c, schema)).isZero();
        assertThat(columns(c, schema + ".b")).containsExactly("id", "amount");
      } finally {
        exec(c, "DROP SCHEMA " + schema + (dialect() == SqlDialect.MYSQL ? "" : " CASCADE"));
      }
    }
  }

  @Test
  void higherTokenAdvancesAndLowerIsRejectedForEveryKindOfWrite() throws Exception {
    Names n = names();
    try (Connection c = connect()) {
      createTable(c, n.table());
      install(c, n, false, false);
      session(c, n.lock(), 100L);
      insert(c, n.table(), 1, 10);
      insert(c, n.table(), 2, 20);
      update(c, n.table(), 1, 11);
      assertThat(fenceToken(c, n.lock())).isEqualTo(100L);

      session(c, n.lock(), 200L);
      update(c, n.table(), 1, 12);
      assertThat(fenceToken(c, n.lock())).isEqualTo(200L);

      session(c, n.lock(), 100L);
      assertThatThrownBy(() -> insert(c, n.table(), 3, 30)).satisfies(e -> {
        assertState(e, SqlStates.STALE_TOKEN);
        assertThat(e.getMessage()).contains(n.lock()).contains("100").contains("200");
      });
      assertThatThrownBy(() -> update(c, n.table(), 1, 99)).satisfies(e -> assertState(e, SqlStates.STALE_TOKEN));
      assertThatThrownBy(() -> delete(c, n.table(), 2)).satisfies(e -> assertState(e, SqlStates.STALE_TOKEN));
      assertThatThrownBy(() -> {
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + n.table() + " (id, amount) VALUES (?, ?)")) {
          for (int id = 10; id < 13; id++) {
            ps.setInt(1, id);
            ps.setInt(2, id);
            ps.addBatch();
          }
          ps.executeBatch();
        }
      }).satisfies(e -> assertState(e, SqlStates.STALE_TOKEN));

      // A multi-statement transaction: the first write with the current token passes, the stale one fails, and
      // the rollback takes both away.
      c.setAutoCommit(false);
      try {
        session(c, n.lock(), 200L);
        update(c, n.table(), 2, 21);
        session(c, n.lock(), 100L);
        assertThatThrownBy(() -> update(c, n.table(), 1, 98)).satisfies(e -> assertState(e, SqlStates.STALE_TOKEN));
        c.rollback();
      } finally {
        c.setAutoCommit(true);
      }
      assertThat(amounts(c, n.table())).containsExactly(12, 20);
      assertThat(fenceToken(c, n.lock())).isEqualTo(200L);

      session(c, n.lock(), 200L);
      insert(c, n.table(), 3, 30);
      session(c, n.lock(), 300L);
      delete(c, n.table(), 3);
      assertThat(fenceToken(c, n.lock())).isEqualTo(300L);
      assertThat(amounts(c, n.table())).containsExactly(12, 20);
    }
  }

  @Test
  void missingMalformedAndForeignTokensAreRejectedAndLeaveTheFence() throws Exception {
    Names n = names();
    try (Connection c = connect()) {
      createTable(c, n.table());
      install(c, n, false, false);
      session(c, n.lock(), 50L);
      insert(c, n.table(), 1, 10);
    }
    try (Connection c = connect()) {
      assertThatThrownBy(() -> insert(c, n.table(), 2, 20)).satisfies(e -> {
        assertState(e, SqlStates.MISSING_TOKEN);
        assertThat(e.getMessage()).contains("missing token").contains(n.lock()).contains("50");
      });
      session(c, n.lock(), "abc");
      assertThatThrownBy(() -> update(c, n.table(), 1, 11)).satisfies(e -> {
        assertState(e, SqlStates.MISSING_TOKEN);
        assertThat(e.getMessage()).contains("malformed token").contains("abc");
      });
      for (String bad : List.of("-5", "0", "1.5", "99999999999999999999", " 7", "7 ")) {
        session(c, n.lock(), bad);
        assertThatThrownBy(() -> update(c, n.table(), 1, 11)).as(bad)
            .satisfies(e -> assertState(e, SqlStates.MISSING_TOKEN));
      }
      session(c, "another-lock", 60L);
      assertThatThrownBy(() -> update(c, n.table(), 1, 11)).satisfies(e -> {
        assertState(e, SqlStates.MISSING_TOKEN);
        assertThat(e.getMessage()).contains("another-lock");
      });
      assertThat(fenceToken(c, n.lock())).isEqualTo(50L);
      assertThat(amounts(c, n.table())).containsExactly(10);
      session(c, n.lock(), 50L);
      update(c, n.table(), 1, 11);
      assertThat(amounts(c, n.table())).containsExactly(11);
    }
  }

  @Test
  void permissiveLetsMissingTokensThroughButNotMalformedOrStaleOnes() throws Exception {
    Names n = names();
    try (Connection c = connect()) {
      createTable(c, n.table());
      install(c, n, false, true);
      insert(c, n.table(), 1, 10);
      session(c, n.lock(), 70L);
      update(c, n.table(), 1, 11);
      assertThat(fenceToken(c, n.lock())).isEqualTo(70L);
      session(c, n.lock(), 60L);
      assertThatThrownBy(() -> update(c, n.table(), 1, 12)).satisfies(e -> assertState(e, SqlStates.STALE_TOKEN));
      session(c, n.lock(), "x1");
      assertThatThrownBy(() -> update(c, n.table(), 1, 12)).satisfies(e -> assertState(e, SqlStates.MISSING_TOKEN));
    }
    try (Connection c = connect()) {
      update(c, n.table(), 1, 13);
      assertThat(amounts(c, n.table())).containsExactly(13);
    }
  }

  @Test
  void perRowModeComparesWithTheRowsOwnToken() throws Exception {
    Names n = names();
    try (Connection c = connect()) {
      createTable(c, n.table());
      SqlFenceInstaller installer = new SqlFenceInstaller(c);
      SqlFence fence = new SqlFence(TableName.parse(n.table()), n.lock(), true, false);
      assertThat(installer.install(fence).summary()).contains("added column");
      assertThat(installer.install(fence).summary()).startsWith("already installed:");

      session(c, n.lock(), 5L);
      insert(c, n.table(), 1, 10);
      insert(c, n.table(), 2, 20);
      session(c, n.lock(), 7L);
      update(c, n.table(), 1, 11);
      assertThat(rowToken(c, n.table(), 1)).isEqualTo(7L);
      assertThat(rowToken(c, n.table(), 2)).isEqualTo(5L);

      session(c, n.lock(), 6L);
      assertThatThrownBy(() -> update(c, n.table(), 1, 99)).satisfies(e -> {
        assertState(e, SqlStates.STALE_TOKEN);
        assertThat(e.getMessage()).contains("6").contains("7");
      });
      assertThatThrownBy(() -> delete(c, n.table(), 1)).satisfies(e -> assertState(e, SqlStates.STALE_TOKEN));
      // Row 2 was last written with 5: a 6 may write it (WHERE token <= :token) and stamps it.
      update(c, n.table(), 2, 21);
      assertThat(rowToken(c, n.table(), 2)).isEqualTo(6L);
      session(c, n.lock(), "abc");
      assertThatThrownBy(() -> update(c, n.table(), 2, 22)).satisfies(e -> assertState(e, SqlStates.MISSING_TOKEN));
      assertThat(amounts(c, n.table())).containsExactly(11, 21);

      assertThat(installer.uninstall(fence.table()).summary()).contains(SqlFenceDdl.TOKEN_COLUMN);
      assertThat(columns(c, n.table())).doesNotContain(SqlFenceDdl.TOKEN_COLUMN);
    }
    try (Connection c = connect()) {
      update(c, n.table(), 1, 12);
    }
  }

  @Test
  void perRowModeKeepsAnExistingTokenColumn() throws Exception {
    Names n = names();
    try (Connection c = connect()) {
      exec(c, "CREATE TABLE " + n.table() + " (id INT PRIMARY KEY, amount INT NOT NULL, fencing_token BIGINT)");
      SqlFenceInstaller installer = new SqlFenceInstaller(c);
      SqlFence fence = new SqlFence(TableName.parse(n.table()), n.lock(), true, false);
      assertThat(installer.install(fence).summary()).doesNotContain("added column");
      installer.uninstall(fence.table());
      assertThat(columns(c, n.table())).contains(SqlFenceDdl.TOKEN_COLUMN);
    }
  }

  @Test
  void unknownTableFailsClearlyAndInstallsNothing() throws Exception {
    try (Connection c = connect()) {
      boolean fencedBefore = SqlFenceInstaller.isFenced(c);
      SqlFenceInstaller installer = new SqlFenceInstaller(c);
      assertThatThrownBy(() -> installer.install(new SqlFence(TableName.parse("no_such_table"), "x", false, false)))
          .isInstanceOf(SQLException.class)
          .hasMessageContaining("table no_such_table not found");
      assertThat(SqlFenceInstaller.isFenced(c)).isEqualTo(fencedBefore);
      assertThatThrownBy(() -> installer.uninstall(TableName.parse("no_such_table")))
          .hasMessageContaining("table no_such_table not found");
    }
  }

  /**
   * The takeover ordering: an old-token transaction is in flight when the new token's first write arrives. The new
   * write waits for it; an old-token write arriving meanwhile either waits and fails or lands before the new write;
   * once the new token committed, every old-token write fails.
   */
  @Test
  void newTokenWaitsForOldTokenTransactionsInFlightThenOldTokensFail() throws Exception {
    Names n = names();
    ExecutorService pool = Executors.newFixedThreadPool(2);
    try (Connection a = connect(); Connection b = connect(); Connection c = connect(); Connection d = connect()) {
      createTable(a, n.table());
      install(a, n, false, false);
      session(a, n.lock(), 10L);
      for (int id = 1; id <= 4; id++) {
        insert(a, n.table(), id, 0);
      }
      a.setAutoCommit(false);
      update(a, n.table(), 1, 1);

      session(b, n.lock(), 20L);
      Future<Long> newWrite = pool.submit(() -> {
        update(b, n.table(), 2, 2);
        return System.nanoTime();
      });
      Thread.sleep(700);
      assertThat(newWrite.isDone()).as("the new token's first write waits for the old transaction").isFalse();

      session(c, n.lock(), 10L);
      Future<Long> lateOldWrite = pool.submit(() -> {
        update(c, n.table(), 3, 3);
        return System.nanoTime();
      });
      Thread.sleep(300);
      long oldCommit = System.nanoTime();
      a.commit();
      long newDone = newWrite.get(20, TimeUnit.SECONDS);
      assertThat(newDone).isGreaterThan(oldCommit);
      try {
        long lateDone = lateOldWrite.get(20, TimeUnit.SECONDS);
        assertThat(lateDone).as("an old-token write may only land before the new token's").isLessThan(newDone);
      } catch (ExecutionException e) {
        assertState(e.getCause(), SqlStates.STALE_TOKEN);
      }
      assertThat(fenceToken(d, n.lock())).isEqualTo(20L);

      a.setAutoCommit(true);
      session(d, n.lock(), 10L);
      for (Connection old : List.of(a, d)) {
        assertThatThrownBy(() -> update(old, n.table(), 4, 4)).satisfies(e -> assertState(e, SqlStates.STALE_TOKEN));
      }
      assertThat(amounts(d, n.table()).subList(0, 2)).containsExactly(1, 2);
      assertThat(amounts(d, n.table()).get(3)).isZero();
    } finally {
      pool.shutdownNow();
    }
  }

  /**
   * A snapshot older than the advance must not let an old token through: a REPEATABLE READ transaction that began
   * before the new token's write fails (stale token or serialization failure) instead of reading the old fence.
   */
  @Test
  void repeatableReadSnapshotFromBeforeTheAdvanceDoesNotAdmitTheOldToken() throws Exception {
    Names n = names();
    try (Connection a = connect(); Connection b = connect()) {
      createTable(a, n.table());
      install(a, n, false, false);
      session(a, n.lock(), 10L);
      insert(a, n.table(), 1, 0);
      insert(a, n.table(), 2, 0);
      a.setAutoCommit(false);
      a.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
      assertThat(fenceToken(a, n.lock())).isEqualTo(10L);
      amounts(a, n.table());

      session(b, n.lock(), 20L);
      update(b, n.table(), 2, 2);

      assertThatThrownBy(() -> update(a, n.table(), 1, 1)).satisfies(e -> assertThat(states(e))
          .as("SQLSTATEs of " + e).containsAnyOf(SqlStates.STALE_TOKEN, "40001"));
      a.rollback();
      a.setAutoCommit(true);
      assertThat(amounts(b, n.table())).containsExactly(0, 2);
    }
  }

  /**
   * After an etcd restore a new holder can get exactly the old holder's token. The grant id beside
   * the token tells them apart: the advancing write stores its grant, an equal token of another grant (or of none)
   * is rejected with FN001, the same grant passes, and a higher token of any grant advances and stores its own.
   */
  @Test
  void anEqualTokenOfAnotherGrantIsRejected() throws Exception {
    Names n = names();
    try (Connection a = connect(); Connection b = connect()) {
      createTable(a, n.table());
      install(a, n, false, false);
      session(a, n.lock(), 7L);
      grant(a, "1a2b");
      insert(a, n.table(), 1, 10);
      assertThat(fenceGrant(a, n.lock())).isEqualTo("1a2b");
      update(a, n.table(), 1, 11);
      update(a, n.table(), 1, 12); // PostgreSQL: the remembered way
      grant(a, "3c4d"); // the memory is of the token and its grant: another grant is decided by the fence row
      assertThatThrownBy(() -> update(a, n.table(), 1, 666)).satisfies(e -> assertState(e, SqlStates.STALE_TOKEN));
      grant(a, "1a2b");

      session(b, n.lock(), 7L);
      grant(b, "3c4d");
      assertThatThrownBy(() -> update(b, n.table(), 1, 666)).satisfies(e -> {
        assertState(e, SqlStates.STALE_TOKEN);
        assertThat(e.getMessage()).contains("token 7").contains(n.lock()).contains("another grant")
            .contains("1a2b").contains("3c4d");
      });
      assertThatThrownBy(() -> insert(b, n.table(), 2, 666)).satisfies(e -> assertState(e, SqlStates.STALE_TOKEN));
      grant(b, null);
      assertThatThrownBy(() -> update(b, n.table(), 1, 666)).satisfies(e -> {
        assertState(e, SqlStates.STALE_TOKEN);
        assertThat(e.getMessage()).contains("another grant");
      });
      grant(b, "1a2b");
      update(b, n.table(), 1, 13);
      assertThat(amounts(a, n.table())).containsExactly(13);

      // The new holder's higher token advances and stores its grant; the old grant's equal token is now stale.
      session(b, n.lock(), 8L);
      grant(b, "3c4d");
      update(b, n.table(), 1, 14);
      assertThat(fenceToken(a, n.lock())).isEqualTo(8L);
      assertThat(fenceGrant(a, n.lock())).isEqualTo("3c4d");
      assertThatThrownBy(() -> update(a, n.table(), 1, 666)).satisfies(e -> assertState(e, SqlStates.STALE_TOKEN));
      session(a, n.lock(), 8L);
      assertThatThrownBy(() -> update(a, n.table(), 1, 666)).satisfies(e -> {
        assertState(e, SqlStates.STALE_TOKEN);
        assertThat(e.getMessage()).contains("another grant");
      });
      assertThat(amounts(a, n.table())).containsExactly(14);

      // A malformed grant is a malformed session: FN002, fence unchanged.
      for (String bad : List.of("a b", "x".repeat(65), "caf\u00e9", "tab\there")) {
        session(b, n.lock(), 9L);
        grant(b, bad);
        assertThatThrownBy(() -> update(b, n.table(), 1, 666)).as(bad)
            .satisfies(e -> assertState(e, SqlStates.MISSING_TOKEN));
      }
      assertThat(fenceToken(a, n.lock())).isEqualTo(8L);
      assertThat(fenceGrant(a, n.lock())).isEqualTo("3c4d");
    }
  }

  /** A fence row without a grant (advanced by a session without one, or installed before grants) accepts any. */
  @Test
  void aFenceRowWithoutAGrantAcceptsTheEqualTokenOfAnyGrant() throws Exception {
    Names n = names();
    try (Connection a = connect(); Connection b = connect()) {
      createTable(a, n.table());
      install(a, n, false, false);
      session(a, n.lock(), 7L);
      insert(a, n.table(), 1, 10);
      assertThat(fenceGrant(a, n.lock())).isNull();
      session(b, n.lock(), 7L);
      grant(b, "3c4d");
      update(b, n.table(), 1, 11);
      grant(a, "1a2b");
      update(a, n.table(), 1, 12);
      assertThat(fenceGrant(a, n.lock())).as("an equal token stores nothing").isNull();
      assertThat(amounts(a, n.table())).containsExactly(12);
    }
  }

  /**
   * {@code fence reset} sets a token it does not know the grant of: the stored grant goes (NULL accepts any), so that
   * the holder of the reset token is not refused as "another grant" because of whoever wrote the fence before.
   */
  @Test
  void aFenceResetClearsTheStoredGrant() throws Exception {
    Names n = names();
    try (Connection a = connect(); Connection b = connect()) {
      createTable(a, n.table());
      install(a, n, false, false);
      session(a, n.lock(), 900L);
      grant(a, "forger");
      insert(a, n.table(), 1, 10);
      assertThat(FenceReset.set(b, null, n.lock(), 7L, true)).isEqualTo(900L);
      assertThat(fenceToken(b, n.lock())).isEqualTo(7L);
      assertThat(fenceGrant(b, n.lock())).isNull();
      session(b, n.lock(), 7L);
      grant(b, "1a2b");
      update(b, n.table(), 1, 11);
      assertThat(amounts(b, n.table())).containsExactly(11);
    }
  }

  /** A fence table created before grants existed gets the grant columns on the next install. */
  @Test
  void installAddsTheGrantColumnsToAnOlderFenceTable() throws Exception {
    installOnOlderFenceTables(false);
  }

  /**
   * A fence table with grant_id but without grant_token gets grant_token on the next install, and the SQL fence then
   * writes both (MariaDB/MySQL: in the stripes too).
   */
  @Test
  void installAddsTheGrantTokenColumnToAFenceTableWithAGrantColumn() throws Exception {
    installOnOlderFenceTables(true);
  }

  private void installOnOlderFenceTables(boolean withGrantId) throws Exception {
    Names n = names();
    String schema = "old_" + n.table();
    try (Connection c = connect()) {
      exec(c, "CREATE SCHEMA " + schema);
      try {
        createOldFenceTables(c, schema);
        if (withGrantId) {
          exec(c, "ALTER TABLE " + schema + ".fencing_fence ADD COLUMN grant_id varchar(64)");
          if (dialect() == SqlDialect.MYSQL) {
            exec(c, "ALTER TABLE " + schema + ".fencing_fence_stripe ADD COLUMN grant_id varchar(64)");
          }
        }
        createTable(c, schema + ".t");
        SqlFence fence = new SqlFence(TableName.parse(schema + ".t"), n.lock(), false, false);
        String summary = new SqlFenceInstaller(c).install(fence).summary();
        assertThat(summary).contains("added column").contains("fencing_fence.grant_token");
        if (withGrantId) {
          assertThat(summary).doesNotContain(".grant_id");
        } else {
          assertThat(summary).contains("fencing_fence.grant_id");
        }
        assertThat(new SqlFenceInstaller(c).install(fence).summary()).startsWith("already installed:")
            .doesNotContain("added column");
        session(c, n.lock(), 5L);
        grant(c, "aa");
        insert(c, schema + ".t", 1, 1);
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT token, grant_id, grant_token"
            + " FROM " + schema + ".fencing_fence WHERE lock_name = '" + n.lock() + "'")) {
          assertThat(rs.next()).isTrue();
          assertThat(rs.getLong(1)).isEqualTo(5L);
          assertThat(rs.getString(2)).isEqualTo("aa");
          assertThat(rs.getLong(3)).isEqualTo(5L);
        }
        if (dialect() == SqlDialect.MYSQL) {
          try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT COUNT(*) FROM " + schema
              + ".fencing_fence_stripe WHERE lock_name = '" + n.lock() + "' AND token = 5 AND grant_id = 'aa'"
              + " AND grant_token = 5")) {
            assertThat(rs.next()).isTrue();
            assertThat(rs.getInt(1)).isEqualTo(SqlFenceDdl.MYSQL_STRIPES);
          }
        }
        grant(c, "bb");
        assertThatThrownBy(() -> insert(c, schema + ".t", 2, 2)).satisfies(e -> assertState(e, SqlStates.STALE_TOKEN));
      } finally {
        exec(c, "DROP SCHEMA " + schema + (dialect() == SqlDialect.MYSQL ? "" : " CASCADE"));
      }
    }
  }

  /**
   * A grant stored beside another token than the fence's counts for nothing: a writer that moved the token without
   * knowing about grants left it there. The equal token of any grant passes, and the next advance stores its grant.
   */
  @Test
  void aGrantStoredForAnotherTokenCountsForNothing() throws Exception {
    Names n = names();
    try (Connection a = connect(); Connection b = connect()) {
      createTable(a, n.table());
      install(a, n, false, false);
      session(a, n.lock(), 7L);
      grant(a, "1a2b");
      insert(a, n.table(), 1, 10);
      exec(a, "UPDATE fencing_fence SET grant_token = 6 WHERE lock_name = '" + n.lock() + "'");
      if (dialect() == SqlDialect.MYSQL) {
        exec(a, "UPDATE fencing_fence_stripe SET grant_token = 6 WHERE lock_name = '" + n.lock() + "'");
      }
      session(b, n.lock(), 7L);
      grant(b, "3c4d");
      update(b, n.table(), 1, 11);
      grant(b, null);
      update(b, n.table(), 1, 12);
      session(b, n.lock(), 8L);
      grant(b, "3c4d");
      update(b, n.table(), 1, 13);
      session(a, n.lock(), 8L);
      assertThatThrownBy(() -> update(a, n.table(), 1, 666)).satisfies(e -> {
        assertState(e, SqlStates.STALE_TOKEN);
        assertThat(e.getMessage()).contains("another grant");
      });
      assertThat(amounts(a, n.table())).containsExactly(13);
    }
  }

  /** The fence tables as an earlier release created them (no grant_id). */
  void createOldFenceTables(Connection c, String schema) throws SQLException {
    exec(c, "CREATE TABLE " + schema + ".fencing_fence (lock_name varchar(128) PRIMARY KEY, token bigint NOT NULL,"
        + " updated_at timestamp)");
  }

  /**
   * The registry of fenced tables, one row per (table, lock), names as the database reports them;
   * other options update the row, another lock replaces it, uninstall deletes it.
   */
  @Test
  void theRegistryListsEveryFencedTableAsTheDatabaseNamesIt() throws Exception {
    Names n = names();
    try (Connection c = connect()) {
      createTable(c, n.table());
      createTable(c, n.table() + "_b");
      SqlFenceInstaller installer = new SqlFenceInstaller(c);
      TableName stored = installer.resolve(TableName.parse(n.table()));
      TableName storedB = installer.resolve(TableName.parse(n.table() + "_b"));
      installer.install(new SqlFence(TableName.parse(n.table()), n.lock(), false, false));
      installer.install(new SqlFence(TableName.parse(n.table() + "_b"), n.lock(), true, false));
      assertThat(registry(c, stored)).containsExactly(stored.schema() + "|" + stored.name() + "|" + n.lock() + "|table");
      assertThat(registry(c, storedB)).containsExactly(storedB.schema() + "|" + storedB.name() + "|" + n.lock() + "|row");
      Timestamp installedAt = installedAt(c, stored);
      assertThat(installedAt).isNotNull();

      installer.install(new SqlFence(TableName.parse(n.table()), n.lock(), false, false));
      assertThat(installedAt(c, stored)).as("an unchanged re-install changes nothing").isEqualTo(installedAt);
      installer.install(new SqlFence(TableName.parse(n.table()), n.lock(), true, false));
      assertThat(registry(c, stored)).containsExactly(stored.schema() + "|" + stored.name() + "|" + n.lock() + "|row");
      installer.install(new SqlFence(TableName.parse(n.table()), n.lock() + "-2", false, false));
      assertThat(registry(c, stored)).containsExactly(stored.schema() + "|" + stored.name() + "|" + n.lock() + "-2|table");

      installer.uninstall(TableName.parse(n.table()));
      assertThat(registry(c, stored)).isEmpty();
      assertThat(registry(c, storedB)).hasSize(1);
      installer.uninstall(TableName.parse(n.table() + "_b"));
      assertThat(registry(c, storedB)).isEmpty();
    }
  }

  /** Rows of the registry for {@code table}, as "schema|table|lock|mode". */
  List<String> registry(Connection c, TableName table) throws SQLException {
    List<String> out = new ArrayList<>();
    try (PreparedStatement ps = c.prepareStatement("SELECT table_schema, table_name, lock_name, mode FROM "
        + table.schemaPrefix(dialect()) + "fencing_fenced_table WHERE table_schema = ? AND table_name = ?"
        + " ORDER BY lock_name")) {
      ps.setString(1, table.schema());
      ps.setString(2, table.name());
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          out.add(rs.getString(1) + "|" + rs.getString(2) + "|" + rs.getString(3) + "|" + rs.getString(4));
        }
      }
    } catch (SQLException e) {
      if (!tableExists(c, table.schema(), "fencing_fenced_table")) {
        return out;
      }
      throw e;
    }
    return out;
  }

  private Timestamp installedAt(Connection c, TableName table) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT installed_at FROM " + table.schemaPrefix(dialect())
        + "fencing_fenced_table WHERE table_schema = ? AND table_name = ?")) {
      ps.setString(1, table.schema());
      ps.setString(2, table.name());
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getTimestamp(1) : null;
      }
    }
  }

  private boolean tableExists(Connection c, String schema, String name) throws SQLException {
    var md = c.getMetaData();
    String catalog = dialect() == SqlDialect.MYSQL ? schema : null;
    String schemaPattern = dialect() == SqlDialect.MYSQL ? null : schema;
    try (ResultSet rs = md.getTables(catalog, schemaPattern, dialect().fold(name), null)) {
      return rs.next();
    }
  }

  // ------------------------------------------------------------------------------------------------------ helpers

  void install(Connection c, Names n, boolean perRow, boolean permissive) throws SQLException {
    new SqlFenceInstaller(c).install(new SqlFence(TableName.parse(n.table()), n.lock(), perRow, permissive));
  }

  static void exec(Connection c, String sql) throws SQLException {
    try (Statement st = c.createStatement()) {
      st.execute(sql);
    }
  }

  static void insert(Connection c, String table, int id, int amount) throws SQLException {
    exec(c, "INSERT INTO " + table + " (id, amount) VALUES (" + id + ", " + amount + ")");
  }

  static void update(Connection c, String table, int id, int amount) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("UPDATE " + table + " SET amount = ? WHERE id = ?")) {
      ps.setInt(1, amount);
      ps.setInt(2, id);
      ps.executeUpdate();
    }
  }

  static void delete(Connection c, String table, int id) throws SQLException {
    exec(c, "DELETE FROM " + table + " WHERE id = " + id);
  }

  static List<Integer> amounts(Connection c, String table) throws SQLException {
    List<Integer> out = new ArrayList<>();
    try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT amount FROM " + table
        + " ORDER BY id")) {
      while (rs.next()) {
        out.add(rs.getInt(1));
      }
    }
    return out;
  }

  static Long fenceToken(Connection c, String lock) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT token FROM fencing_fence WHERE lock_name = ?")) {
      ps.setString(1, lock);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getLong(1) : null;
      }
    }
  }

  static String fenceGrant(Connection c, String lock) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT grant_id FROM fencing_fence WHERE lock_name = ?")) {
      ps.setString(1, lock);
      try (ResultSet rs = ps.executeQuery()) {
        assertThat(rs.next()).as("fence row of " + lock).isTrue();
        return rs.getString(1);
      }
    }
  }

  static Long rowToken(Connection c, String table, int id) throws SQLException {
    try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT fencing_token FROM " + table
        + " WHERE id = " + id)) {
      rs.next();
      long v = rs.getLong(1);
      return rs.wasNull() ? null : v;
    }
  }

  Set<String> columns(Connection c, String table) throws SQLException {
    Set<String> out = new LinkedHashSet<>();
    try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT * FROM " + table + " WHERE 1=0")) {
      for (int i = 1; i <= rs.getMetaData().getColumnCount(); i++) {
        out.add(rs.getMetaData().getColumnName(i).toLowerCase(java.util.Locale.ROOT));
      }
    }
    return out;
  }

  abstract int triggerCount(Connection c, String table) throws SQLException;

  /** Tables, functions and procedures of the fence in {@code schema}. */
  abstract int fenceObjects(Connection c, String schema) throws SQLException;

  static int count(Connection c, String sql, String table) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setString(1, table);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getInt(1);
      }
    }
  }

  /** Every SQLSTATE in the exception, its causes and chained exceptions (batch errors nest the fence's). */
  static Set<String> states(Throwable e) {
    Set<String> out = new LinkedHashSet<>();
    List<Throwable> todo = new ArrayList<>(List.of(e));
    while (!todo.isEmpty() && out.size() < 50) {
      Throwable t = todo.remove(0);
      if (t instanceof SQLException s) {
        if (s.getSQLState() != null) {
          out.add(s.getSQLState());
        }
        if (s.getNextException() != null) {
          todo.add(s.getNextException());
        }
      }
      if (t.getCause() != null && t.getCause() != t) {
        todo.add(t.getCause());
      }
    }
    return out;
  }

  static void assertState(Throwable e, String state) {
    assertThat(states(e)).as("SQLSTATEs of " + e).contains(state);
  }
}
