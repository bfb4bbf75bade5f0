package dev.fencing.fence.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.fence.sql.FenceReset;
import dev.fencing.fence.sql.SqlFence;
import dev.fencing.fence.sql.SqlFenceInstaller;
import dev.fencing.fence.sql.TableName;
import dev.fencing.fence.store.FencePolicy;
import dev.fencing.fence.store.FenceState;
import dev.fencing.fence.store.FenceStoreException;
import dev.fencing.fence.store.JdbcFenceStore;
import dev.fencing.fence.store.Verdict.Outcome;
import dev.fencing.fence.store.Verdict;
import dev.fencing.protocol.Rejection;
import dev.fencing.protocol.SqlStates;
import dev.fencing.protocol.TokenHeaders;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * {@link JdbcFenceStore} against a real database: the store's own contract, and that it shares the fence with the SQL
 * fence of fences/sql in both directions, including its locking (an advance waits for SQL transactions that passed
 * with the old token). Subclasses bring the database.
 */
abstract class JdbcFenceStoreIT {

  private static final AtomicInteger NAMES = new AtomicInteger();

  abstract TestDatabase db();

  record Names(String table, String lock) {
  }

  static Names names() {
    int n = NAMES.incrementAndGet();
    return new Names("orders_" + n + "_" + System.nanoTime() % 100000, "ledger-" + n);
  }

  JdbcFenceStore store() {
    return new JdbcFenceStore(db().dataSource());
  }

  /** A table with the SQL fence of {@code lock} installed (table mode, strict). */
  void fencedTable(Names n) throws SQLException {
    try (Connection c = db().connect()) {
      TestDatabase.exec(c, "CREATE TABLE " + n.table() + " (id INT PRIMARY KEY, amount INT NOT NULL)");
      new SqlFenceInstaller(c).install(new SqlFence(TableName.parse(n.table()), n.lock(), false, false));
    }
  }

  /** An autocommit SQL write with {@code token}, from a session that carries no grant id. */
  void sqlWrite(Names n, long token, int id) throws SQLException {
    try (Connection c = db().connect()) {
      db().session(c, n.lock(), token);
      TestDatabase.exec(c, "INSERT INTO " + n.table() + " (id, amount) VALUES (" + id + ", 1)");
    }
  }

  /** An autocommit SQL write with {@code token} and {@code grant}, as a service running the agent makes it. */
  void sqlWrite(Names n, long token, String grant, int id) throws SQLException {
    try (Connection c = db().connect()) {
      db().session(c, n.lock(), token, grant);
      TestDatabase.exec(c, "INSERT INTO " + n.table() + " (id, amount) VALUES (" + id + ", 1)");
    }
  }

  /** The row's grant columns: {grant_id, grant_token as text}, nulls as null. */
  String[] grantColumns(String schema, String lock) throws SQLException {
    try (Connection c = db().connect();
        PreparedStatement ps = c.prepareStatement("SELECT grant_id, grant_token FROM "
            + (schema == null ? "" : schema + ".") + "fencing_fence WHERE lock_name = ?")) {
      ps.setString(1, lock);
      try (ResultSet rs = ps.executeQuery()) {
        assertThat(rs.next()).as("a fence row for " + lock).isTrue();
        return new String[] {rs.getString(1), rs.getString(2)};
      }
    }
  }

  @Test
  void anEqualTokenFromAnotherGrantIsReplayedAndTheAdvancingGrantIsKept() throws Exception {
    db().createFenceTable();
    JdbcFenceStore store = store();
    String lock = names().lock();
    assertThat(store.state(lock)).isEqualTo(FenceState.NONE);
    assertThat(store.check(lock, 5, "694d8a3b1c2e0f11", false)).isEqualTo(Verdict.advanced(5));
    assertThat(grantColumns(null, lock)).containsExactly("694d8a3b1c2e0f11", "5");
    assertThat(store.state(lock)).isEqualTo(new FenceState(5, "694d8a3b1c2e0f11"));
    assertThat(store.check(lock, 5, "694d8a3b1c2e0f11", false)).isEqualTo(Verdict.accepted(5));
    assertThat(store.check(lock, 5, "694d8a3b1c2e0f99", false)).isEqualTo(Verdict.replayed(5));
    assertThat(store.check(lock, 5, null, false)).isEqualTo(Verdict.replayed(5));
    assertThat(store.check(lock, 5, false)).isEqualTo(Verdict.replayed(5));
    assertThat(store.check(lock, 4, "694d8a3b1c2e0f11", false)).isEqualTo(Verdict.stale(4, 5));
    assertThat(store.state(lock)).as("the fence did not move").isEqualTo(new FenceState(5, "694d8a3b1c2e0f11"));
    // Another instance's store sees the same grant.
    assertThat(store().check(lock, 5, "694d8a3b1c2e0f99", false)).isEqualTo(Verdict.replayed(5));
    // A new lock's first token (an INSERT) stores its grant too; an advance without a grant stores none.
    String other = names().lock();
    assertThat(store.check(other, 3, "b2", false)).isEqualTo(Verdict.advanced(3));
    assertThat(store.check(other, 3, "c3", false)).isEqualTo(Verdict.replayed(3));
    assertThat(store.check(other, 4, null, false)).isEqualTo(Verdict.advanced(4));
    assertThat(grantColumns(null, other)).containsExactly(null, null);
    assertThat(store.check(other, 4, "c3", false)).isEqualTo(Verdict.accepted(4));
    assertThat(store.check(other, 4, "d4", false)).isEqualTo(Verdict.accepted(4));
    assertThat(grantColumns(null, other)).as("an equal token writes nothing").containsExactly(null, null);
  }

  @Test
  void concurrentAdvancesToOneTokenFromTwoGrantsLetExactlyOneGrantIn() throws Exception {
    db().createFenceTable();
    ExecutorService pool = Executors.newFixedThreadPool(2);
    try {
      for (int round = 0; round < 10; round++) {
        String lock = names().lock();
        JdbcFenceStore a = store();
        JdbcFenceStore b = store();
        a.check(lock, 1, "old", false);
        Future<Verdict> va = pool.submit(() -> a.check(lock, 2, "a", false));
        Future<Verdict> vb = pool.submit(() -> b.check(lock, 2, "b", false));
        assertThat(List.of(va.get(), vb.get())).extracting(Verdict::outcome)
            .containsExactlyInAnyOrder(Outcome.ADVANCED, Outcome.REPLAYED);
        String winner = va.get().outcome() == Outcome.ADVANCED ? "a" : "b";
        assertThat(grantColumns(null, lock)).containsExactly(winner, "2");
      }
    } finally {
      pool.shutdownNow();
    }
  }

  /**
   * A fence table created before grants (by an older {@code sql install}) gets the two nullable columns on the
   * store's first use, once: a second store finds them and alters nothing.
   */
  @Test
  void anOlderFenceTableGetsTheGrantColumnsOnFirstUse() throws Exception {
    String schema = "grants_" + NAMES.incrementAndGet() + "_" + System.nanoTime() % 100000;
    String lock = names().lock();
    try (Connection c = db().connect()) {
      TestDatabase.exec(c, db().kind() == TestDatabase.Kind.MARIADB ? "CREATE DATABASE " + schema
          : "CREATE SCHEMA " + schema);
      TestDatabase.exec(c, "CREATE TABLE " + schema + ".fencing_fence (lock_name varchar(128) PRIMARY KEY, token "
          + "bigint NOT NULL, updated_at " + (db().kind() == TestDatabase.Kind.MARIADB ? "DATETIME(6)" : "timestamp")
          + ")");
      TestDatabase.exec(c, "INSERT INTO " + schema + ".fencing_fence (lock_name, token, updated_at) VALUES ('"
          + lock + "', 5, NULL)");
    }
    JdbcFenceStore store = new JdbcFenceStore(db().dataSource(), schema);
    assertThat(store.check(lock, 5, "a1", false)).as("no grant stored yet").isEqualTo(Verdict.accepted(5));
    assertThat(grantColumns(schema, lock)).containsExactly(null, null);
    assertThat(store.check(lock, 6, "a1", false)).isEqualTo(Verdict.advanced(6));
    assertThat(store.check(lock, 6, "b2", false)).isEqualTo(Verdict.replayed(6));
    JdbcFenceStore second = new JdbcFenceStore(db().dataSource(), schema);
    assertThat(second.state(lock)).isEqualTo(new FenceState(6, "a1"));
    assertThat(second.check(lock, 6, "b2", false)).isEqualTo(Verdict.replayed(6));
    assertThat(grantColumns(schema, lock)).containsExactly("a1", "6");

    // The table dropped and created anew without the columns (sql uninstall, then an older sql install): the store
    // fails once, then finds them missing and adds them again.
    try (Connection c = db().connect()) {
      TestDatabase.exec(c, "DROP TABLE " + schema + ".fencing_fence");
      TestDatabase.exec(c, "CREATE TABLE " + schema + ".fencing_fence (lock_name varchar(128) PRIMARY KEY, token "
          + "bigint NOT NULL, updated_at " + (db().kind() == TestDatabase.Kind.MARIADB ? "DATETIME(6)" : "timestamp")
          + ")");
    }
    Verdict first;
    try {
      first = store.check(lock, 9, "c3", false);
    } catch (FenceStoreException e) {
      first = store.check(lock, 9, "c3", false);
    }
    assertThat(first).isEqualTo(Verdict.advanced(9));
    assertThat(store.check(lock, 9, "d4", false)).isEqualTo(Verdict.replayed(9));
    assertThat(grantColumns(schema, lock)).containsExactly("c3", "9");
  }

  /**
   * A writer that moves the token without knowing about grants (the SQL fence's triggers, {@code fence reset})
   * leaves the old grant in the row, but for the old token: the new token has no grant, so its holder is not refused.
   */
  @Test
  void aTokenAdvancedByTheSqlFenceCarriesNoStaleGrant() throws Exception {
    Names n = names();
    fencedTable(n);
    JdbcFenceStore store = store();
    assertThat(store.check(n.lock(), 5, "a1", false)).isEqualTo(Verdict.advanced(5));
    sqlWrite(n, 6, 1);
    assertThat(store.state(n.lock())).isEqualTo(new FenceState(6, null));
    assertThat(store.check(n.lock(), 6, "b2", false)).isEqualTo(Verdict.accepted(6));
    assertThat(store.check(n.lock(), 7, "b2", false)).isEqualTo(Verdict.advanced(7));
    assertThat(store.check(n.lock(), 7, "c3", false)).isEqualTo(Verdict.replayed(7));
    sqlWrite(n, 7, "b2", 2); // the same grant through SQL (the agent sends it beside the token): the same holder
    assertThat(store.state(n.lock())).isEqualTo(new FenceState(7, "b2"));
  }

  /**
   * One fence row, one grant rule: a token a SQL write advanced is the grant's of that session for
   * the store too. Through a real HTTP fence, an equal token from another grant (or none) is a replayed token (409),
   * the same grant passes; so on the store, whether the SQL write came first or after a store advance.
   */
  @Test
  void aGrantStoredBySqlCountsForTheHttpFence() throws Exception {
    Names n = names();
    fencedTable(n);
    sqlWrite(n, 7, "a1", 1);
    HttpFence fence = new HttpFence(FencePolicy.forLocks(n.lock()).build(), store());
    HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    try (FencedServer s = FencedServer.jdk(fence, new Backend())) {
      HttpResponse<String> replayed = client.send(post(s, n.lock(), 7, "b2"), HttpResponse.BodyHandlers.ofString());
      assertThat(replayed.statusCode()).isEqualTo(409);
      assertThat(replayed.headers().allValues(TokenHeaders.REJECTED))
          .containsExactly(Rejection.REPLAYED_TOKEN.header());
      assertThat(client.send(post(s, n.lock(), 7), HttpResponse.BodyHandlers.ofString()).statusCode())
          .as("an equal token without a grant while one is stored").isEqualTo(409);
      assertThat(client.send(post(s, n.lock(), 7, "a1"), HttpResponse.BodyHandlers.ofString()).statusCode())
          .as("the grant the SQL write stored").isEqualTo(200);
    }
    assertThat(grantColumns(null, n.lock())).containsExactly("a1", "7");

    // After the store advanced with a grant of its own, a SQL advance with another grant replaces it.
    JdbcFenceStore store = store();
    assertThat(store.check(n.lock(), 8, "c3", false)).isEqualTo(Verdict.advanced(8));
    sqlWrite(n, 9, "d4", 2);
    assertThat(store.state(n.lock())).isEqualTo(new FenceState(9, "d4"));
    assertThat(store.check(n.lock(), 9, "c3", false)).isEqualTo(Verdict.replayed(9));
    assertThat(store.check(n.lock(), 9, null, false)).isEqualTo(Verdict.replayed(9));
    assertThat(store.check(n.lock(), 9, "d4", false)).isEqualTo(Verdict.accepted(9));
    assertThat(grantColumns(null, n.lock())).containsExactly("d4", "9");
  }

  /**
   * The reverse: a token the store advanced with a grant is that grant's for the SQL fence, which refuses the equal
   * token of another grant (or of none) with FN001 and passes the same grant's (MariaDB: through the stripe rows).
   */
  @Test
  void aGrantStoredByTheStoreCountsForTheSqlFence() throws Exception {
    Names n = names();
    fencedTable(n);
    sqlWrite(n, 4, "a1", 1);
    JdbcFenceStore store = store();
    assertThat(store.check(n.lock(), 5, "b2", false)).isEqualTo(Verdict.advanced(5));
    assertThatThrownBy(() -> sqlWrite(n, 5, "c3", 2)).isInstanceOf(SQLException.class)
        .satisfies(e -> assertThat(((SQLException) e).getSQLState()).isEqualTo(SqlStates.STALE_TOKEN))
        .hasMessageContaining("another grant");
    assertThatThrownBy(() -> sqlWrite(n, 5, 3)).isInstanceOf(SQLException.class)
        .satisfies(e -> assertThat(((SQLException) e).getSQLState()).isEqualTo(SqlStates.STALE_TOKEN));
    sqlWrite(n, 5, "b2", 4);
    assertThat(ids(n)).containsExactly(1, 4);
    assertThat(store.state(n.lock())).isEqualTo(new FenceState(5, "b2"));
  }

  /**
   * {@code fence reset} does not know the grant of the token it sets: it leaves no grant counted for it, for the store
   * and the SQL fence alike, and the next advance (by either) stores its grant again.
   */
  @Test
  void aFenceResetLeavesNoGrantCounted() throws Exception {
    Names n = names();
    fencedTable(n);
    JdbcFenceStore store = store();
    sqlWrite(n, 900, "forger", 1);
    try (Connection c = db().connect()) {
      assertThat(FenceReset.set(c, null, n.lock(), 7, true)).isEqualTo(900L);
    }
    assertThat(store.state(n.lock())).isEqualTo(new FenceState(7, null));
    assertThat(store.check(n.lock(), 7, "a1", false)).isEqualTo(Verdict.accepted(7));
    sqlWrite(n, 7, "b2", 2);
    assertThat(store.check(n.lock(), 8, "c3", false)).isEqualTo(Verdict.advanced(8));
    try (Connection c = db().connect()) {
      assertThat(FenceReset.set(c, null, n.lock(), 12, false)).isEqualTo(8L);
    }
    assertThat(store.state(n.lock())).isEqualTo(new FenceState(12, null));
    sqlWrite(n, 12, "d4", 3);
    assertThat(store.check(n.lock(), 12, "e5", false)).isEqualTo(Verdict.accepted(12));
    sqlWrite(n, 13, "d4", 4);
    assertThat(store.check(n.lock(), 13, "e5", false)).isEqualTo(Verdict.replayed(13));
    assertThat(ids(n)).containsExactly(1, 2, 3, 4);
  }

  @Test
  void acceptsEqualWithoutWritingAdvancesOnHigherRejectsLower() throws Exception {
    db().createFenceTable();
    JdbcFenceStore store = store();
    String lock = names().lock();
    assertThat(store.current(lock)).isZero();
    assertThat(store.check(lock, 5)).isEqualTo(Verdict.advanced(5));
    Timestamp written = updatedAt(lock);
    assertThat(written).isNotNull();
    Thread.sleep(20);
    assertThat(store.check(lock, 5)).isEqualTo(Verdict.accepted(5));
    assertThat(updatedAt(lock)).isEqualTo(written);
    assertThat(store.check(lock, 4)).isEqualTo(Verdict.stale(4, 5));
    assertThat(store.check(lock, Long.MAX_VALUE)).isEqualTo(Verdict.advanced(Long.MAX_VALUE));
    assertThat(store.current(lock)).isEqualTo(Long.MAX_VALUE);
    String strict = names().lock();
    assertThat(store.check(strict, 3, true).outcome()).isEqualTo(Outcome.ADVANCED);
    assertThat(store.check(strict, 3, true)).isEqualTo(Verdict.stale(3, 3));
    assertThat(store.check(strict, 4, true).outcome()).isEqualTo(Outcome.ADVANCED);
  }

  @Test
  void concurrentMixedChecksEndAtTheHighestAndEachAdvanceHappensOnce() throws Exception {
    db().createFenceTable();
    JdbcFenceStore store = store();
    String lock = names().lock();
    ExecutorService pool = Executors.newFixedThreadPool(12);
    try {
      List<Future<List<Verdict>>> futures = new ArrayList<>();
      for (int t = 0; t < 12; t++) {
        futures.add(pool.submit(() -> {
          List<Verdict> out = new ArrayList<>();
          for (int i = 0; i < 40; i++) {
            out.add(store.check(lock, 1 + i + ThreadLocalRandom.current().nextInt(20)));
          }
          return out;
        }));
      }
      List<Verdict> all = new ArrayList<>();
      for (Future<List<Verdict>> f : futures) {
        all.addAll(f.get(2, TimeUnit.MINUTES));
      }
      long max = all.stream().mapToLong(Verdict::token).max().orElseThrow();
      assertThat(store.current(lock)).isEqualTo(max);
      assertThat(all.stream().filter(v -> v.outcome() == Outcome.ADVANCED).map(Verdict::token))
          .doesNotHaveDuplicates();
      assertThat(all).filteredOn(v -> v.outcome() == Outcome.STALE).allMatch(v -> v.current() > v.token());
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void aTokenAdvancedByTheSqlFenceIsTheHttpFencesToo() throws Exception {
    Names n = names();
    fencedTable(n);
    sqlWrite(n, 20, 1);
    JdbcFenceStore store = store();
    assertThat(store.check(n.lock(), 19)).isEqualTo(Verdict.stale(19, 20));
    assertThat(store.check(n.lock(), 20)).isEqualTo(Verdict.accepted(20));
  }

  /**
   * Through a real server: the HTTP fence advances to 10, after which the SQL fence refuses token 9 with FN001
   * (MariaDB: this needs the store to have written the stripes, which that fence compares with).
   */
  @Test
  void aTokenAdvancedThroughHttpMakesALowerTokenSqlWriteFailWithFn001() throws Exception {
    Names n = names();
    fencedTable(n);
    sqlWrite(n, 9, 1);
    HttpFence fence = new HttpFence(FencePolicy.forLocks(n.lock()).build(), store());
    HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    try (FencedServer s = FencedServer.jdk(fence, new Backend())) {
      HttpResponse<String> r = client.send(post(s, n.lock(), 10), HttpResponse.BodyHandlers.ofString());
      assertThat(r.statusCode()).isEqualTo(200);
      assertThatThrownBy(() -> sqlWrite(n, 9, 2)).isInstanceOf(SQLException.class)
          .satisfies(e -> assertThat(((SQLException) e).getSQLState()).isEqualTo(SqlStates.STALE_TOKEN))
          .hasMessageContaining("current fence token is 10");
      sqlWrite(n, 10, 3);
      sqlWrite(n, 11, 4);
      HttpResponse<String> stale = client.send(post(s, n.lock(), 10), HttpResponse.BodyHandlers.ofString());
      assertThat(stale.statusCode()).isEqualTo(409);
      assertThat(Json.object(stale.body())).containsEntry("currentToken", 11L);
    }
    assertThat(ids(n)).containsExactly(1, 3, 4);
  }

  /**
   * A SQL transaction that passed the fence with token 5 is still open: checks of 5 pass at once and in parallel (they
   * take no lock), an advance to 6 waits for that transaction, as the SQL fence's own advance does; afterwards the
   * SQL fence refuses 5.
   */
  @Test
  void anAdvanceWaitsForSqlTransactionsWithTheOldTokenWhileSameTokenChecksDoNot() throws Exception {
    Names n = names();
    fencedTable(n);
    sqlWrite(n, 5, 1);
    JdbcFenceStore store = store();
    try (Connection inFlight = db().connect()) {
      db().session(inFlight, n.lock(), 5);
      inFlight.setAutoCommit(false);
      TestDatabase.exec(inFlight, "INSERT INTO " + n.table() + " (id, amount) VALUES (2, 1)");

      ExecutorService pool = Executors.newFixedThreadPool(8);
      try {
        List<Future<Verdict>> same = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
          same.add(pool.submit(() -> store.check(n.lock(), 5)));
        }
        for (Future<Verdict> f : same) {
          assertThat(f.get(10, TimeUnit.SECONDS)).isEqualTo(Verdict.accepted(5));
        }
        CompletableFuture<Verdict> advance = CompletableFuture.supplyAsync(() -> store.check(n.lock(), 6), pool);
        Thread.sleep(500);
        assertThat(advance).isNotDone();
        inFlight.commit();
        assertThat(advance.get(20, TimeUnit.SECONDS)).isEqualTo(Verdict.advanced(6));
      } finally {
        pool.shutdownNow();
      }
    }
    assertThatThrownBy(() -> sqlWrite(n, 5, 3))
        .satisfies(e -> assertThat(((SQLException) e).getSQLState()).isEqualTo(SqlStates.STALE_TOKEN));
    assertThat(ids(n)).containsExactly(1, 2);
  }

  static HttpRequest post(FencedServer s, String lock, long token) {
    return HttpRequest.newBuilder(s.uri().resolve("/orders")).POST(HttpRequest.BodyPublishers.ofString("x"))
        .header(TokenHeaders.TOKEN, Long.toString(token)).header(TokenHeaders.LOCK, lock).build();
  }

  static HttpRequest post(FencedServer s, String lock, long token, String grant) {
    return HttpRequest.newBuilder(s.uri().resolve("/orders")).POST(HttpRequest.BodyPublishers.ofString("x"))
        .header(TokenHeaders.TOKEN, Long.toString(token)).header(TokenHeaders.LOCK, lock)
        .header(TokenHeaders.GRANT, grant).build();
  }

  private Timestamp updatedAt(String lock) throws SQLException {
    try (Connection c = db().connect();
        PreparedStatement ps = c.prepareStatement("SELECT updated_at FROM fencing_fence WHERE lock_name = ?")) {
      ps.setString(1, lock);
      try (ResultSet rs = ps.executeQuery()) {
        assertThat(rs.next()).isTrue();
        return rs.getTimestamp(1);
      }
    }
  }

  private List<Integer> ids(Names n) throws SQLException {
    List<Integer> out = new ArrayList<>();
    try (Connection c = db().connect();
        ResultSet rs = c.createStatement().executeQuery("SELECT id FROM " + n.table() + " ORDER BY id")) {
      while (rs.next()) {
        out.add(rs.getInt(1));
      }
    }
    return out;
  }
}
