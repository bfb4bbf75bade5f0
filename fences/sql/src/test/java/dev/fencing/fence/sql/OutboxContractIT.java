package dev.fencing.fence.sql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.entry;

import dev.fencing.fence.store.SqlDialect;
import dev.fencing.protocol.OutboxSchema;
import dev.fencing.protocol.SqlStates;
import dev.fencing.protocol.TokenGrammar;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * What the tokened outbox must do on every database, against a real one: events commit or roll back with the
 * business rows of a fenced transaction and carry the session's lock, token and grant whatever the insert said; the
 * relay's updates of delivery columns need no token, updates of event columns are refused; key_seq follows commit
 * order per key; a receiver's {@link ProcessedEvents#markFirst} is true once. Subclasses bring the database and its
 * session values. Each test works on its own tables and lock.
 */
abstract class OutboxContractIT {

  private static final AtomicInteger NAMES = new AtomicInteger();

  abstract Connection connect() throws SQLException;

  /** Sets the session values as the agent does; a null value is left unset. */
  abstract void session(Connection c, String lock, Long token, String grant) throws SQLException;

  abstract SqlDialect dialect();

  /** Whether a writer of a key waits for another's transaction (row locks held to commit). */
  boolean keyWritersSerialize() {
    return true;
  }

  record Names(String business, String outbox, String lock) {
  }

  Names names() {
    int n = NAMES.incrementAndGet();
    long salt = System.nanoTime() % 100000;
    return new Names("orders_" + n + "_" + salt, "outbox_" + n + "_" + salt, "shop-" + n);
  }

  /** A business table fenced for the lock (table mode, strict) and an outbox for the same lock. */
  Names setUp() throws SQLException {
    Names n = names();
    try (Connection c = connect()) {
      exec(c, "CREATE TABLE " + n.business() + " (id INT PRIMARY KEY, amount INT NOT NULL)");
      new SqlFenceInstaller(c).install(new SqlFence(TableName.parse(n.business()), n.lock(), false, false));
      new OutboxInstaller(c).install(new SqlOutbox(TableName.parse(n.outbox()), n.lock()));
    }
    return n;
  }

  @Test
  void theOutboxHasTheContractsColumns() throws Exception {
    Names n = setUp();
    try (Connection c = connect()) {
      Set<String> columns = new LinkedHashSet<>();
      try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT * FROM " + n.outbox()
          + " WHERE 1 = 0")) {
        for (int i = 1; i <= rs.getMetaData().getColumnCount(); i++) {
          columns.add(rs.getMetaData().getColumnName(i).toLowerCase(Locale.ROOT));
        }
      }
      assertThat(columns).containsExactlyElementsOf(OutboxInstaller.OUTBOX_COLUMNS);
      // A re-install changes nothing; the registry names the outbox as such.
      assertThat(new OutboxInstaller(c).install(new SqlOutbox(TableName.parse(n.outbox()), n.lock())).summary())
          .startsWith("already installed: tokened outbox");
      assertThat(SqlFenceInstaller.isFenced(c)).isTrue();
      // The agent finds fenced tables by their triggers' names (and, on MariaDB/MySQL and H2, by the registry, whose
      // mode it does not read): the outbox is one of the lock's fenced tables, as the business table is.
      assertThat(agentDetectedTables(c)).contains(dialect().fold(n.outbox()), dialect().fold(n.business()));
      try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT lock_name, mode FROM "
          + "fencing_fenced_table WHERE table_name = '" + dialect().fold(n.outbox()) + "'")) {
        assertThat(rs.next()).isTrue();
        assertThat(rs.getString(1)).isEqualTo(n.lock());
        assertThat(rs.getString(2)).isEqualTo(OutboxDdl.REGISTRY_MODE);
      }
    }
  }

  /** The tables the agent's JDBC hook counts as fenced: the catalog queries of its fence detection. */
  Set<String> agentDetectedTables(Connection c) throws SQLException {
    String sql = switch (dialect()) {
      case POSTGRESQL -> "SELECT DISTINCT c.relname FROM pg_catalog.pg_trigger t JOIN pg_catalog.pg_class c"
          + " ON c.oid = t.tgrelid WHERE t.tgname LIKE 'fencing\\_%' AND NOT t.tgisinternal";
      case MYSQL -> "SELECT DISTINCT event_object_table FROM information_schema.triggers"
          + " WHERE trigger_name LIKE 'fencing\\_%' UNION SELECT table_name FROM fencing_fenced_table";
      default -> "SELECT DISTINCT event_object_table FROM information_schema.triggers"
          + " WHERE trigger_name LIKE 'fencing:%'";
    };
    Set<String> out = new LinkedHashSet<>();
    try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
      while (rs.next()) {
        out.add(rs.getString(1));
      }
    }
    return out;
  }

  @Test
  void aValidSessionCommitsTheBusinessRowAndTheEventTogether() throws Exception {
    Names n = setUp();
    try (Connection c = connect()) {
      c.setAutoCommit(false);
      session(c, n.lock(), 200L, "g-200");
      exec(c, "INSERT INTO " + n.business() + " (id, amount) VALUES (1, 10)");
      // The application tries to choose lock, token, grant, key_seq and state: the trigger overrides all of them.
      exec(c, "INSERT INTO " + n.outbox() + " (" + OutboxSchema.CHANNEL + ", " + OutboxSchema.TARGET + ", "
          + OutboxSchema.PAYLOAD + ", " + OutboxSchema.LOCK + ", " + OutboxSchema.TOKEN + ", " + OutboxSchema.GRANT
          + ", " + OutboxSchema.KEY_SEQ + ", " + OutboxSchema.STATE + ", " + OutboxSchema.HEADERS + ") VALUES ("
          + "'http', 'https://hooks.example/paid', '{\"order\":1}', 'other-lock', 999999, 'forged', 77, 'delivered', "
          + "'X-Trace: abc')");
      exec(c, "INSERT INTO " + n.outbox() + " (" + OutboxSchema.EVENT_ID + ", " + OutboxSchema.CHANNEL + ", "
          + OutboxSchema.TARGET + ", " + OutboxSchema.MESSAGE_KEY + ", " + OutboxSchema.PAYLOAD
          + ") VALUES ('evt-1', 'kafka', 'orders.v1', 'order-1', 'paid')");
      c.commit();
    }
    try (Connection c = connect()) {
      assertThat(count(c, n.business())).isEqualTo(1);
      List<Map<String, Object>> events = events(c, n.outbox());
      assertThat(events).hasSize(2);
      Map<String, Object> http = events.stream().filter(e -> "http".equals(e.get(OutboxSchema.CHANNEL))).findFirst()
          .orElseThrow();
      assertThat(http.get(OutboxSchema.LOCK)).isEqualTo(n.lock());
      assertThat(((Number) http.get(OutboxSchema.TOKEN)).longValue()).isEqualTo(200L);
      assertThat(http.get(OutboxSchema.GRANT)).isEqualTo("g-200");
      assertThat(http.get(OutboxSchema.STATE)).isEqualTo(OutboxSchema.PENDING);
      assertThat(((Number) http.get(OutboxSchema.ATTEMPTS)).intValue()).isZero();
      assertThat(((Number) http.get(OutboxSchema.KEY_SEQ)).longValue()).isEqualTo(1L);
      assertThat(http.get(OutboxSchema.METHOD)).isEqualTo("POST");
      assertThat((String) http.get(OutboxSchema.EVENT_ID)).matches("[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}"
          + "-[0-9a-f]{12}");
      assertThat((String) http.get(OutboxSchema.ORDER_KEY)).matches("[0-9a-f]{64}");
      assertThat(http.get(OutboxSchema.CREATED_AT)).isNotNull();
      assertThat(http.get(OutboxSchema.NEXT_ATTEMPT_AT)).isNotNull();
      Map<String, Object> kafka = events.stream().filter(e -> "kafka".equals(e.get(OutboxSchema.CHANNEL)))
          .findFirst().orElseThrow();
      assertThat(kafka.get(OutboxSchema.EVENT_ID)).isEqualTo("evt-1");
      assertThat(kafka.get(OutboxSchema.METHOD)).isNull();
      assertThat(((Number) kafka.get(OutboxSchema.TOKEN)).longValue()).isEqualTo(200L);
      assertThat(kafka.get(OutboxSchema.ORDER_KEY)).isNotEqualTo(http.get(OutboxSchema.ORDER_KEY));
      // The fence moved to the writer's token.
      assertThat(FenceContractIT.fenceToken(c, n.lock())).isEqualTo(200L);
    }
  }

  @Test
  void aStaleOrMissingTokenRollsBackTheBusinessRowAndTheEvent() throws Exception {
    Names n = setUp();
    try (Connection c = connect()) {
      session(c, n.lock(), 200L, null);
      exec(c, "INSERT INTO " + n.business() + " (id, amount) VALUES (1, 10)");
    }
    try (Connection c = connect()) {
      c.setAutoCommit(false);
      session(c, n.lock(), 100L, null);
      assertThatThrownBy(() -> {
        exec(c, "INSERT INTO " + n.business() + " (id, amount) VALUES (2, 20)");
        insertEvent(c, n.outbox(), "https://hooks.example/stale");
      }).satisfies(e -> FenceContractIT.assertState(e, SqlStates.STALE_TOKEN));
      c.rollback();
      // The outbox alone is fenced too: a transaction whose only write is the event fails the same way. (A
      // PostgreSQL rollback also undoes the transaction's set_config: the agent sets the values again, as here.)
      session(c, n.lock(), 100L, null);
      assertThatThrownBy(() -> insertEvent(c, n.outbox(), "https://hooks.example/stale"))
          .satisfies(e -> FenceContractIT.assertState(e, SqlStates.STALE_TOKEN))
          .hasMessageContaining("stale token 100");
      c.rollback();
    }
    try (Connection c = connect()) {
      c.setAutoCommit(false);
      assertThatThrownBy(() -> insertEvent(c, n.outbox(), "https://hooks.example/none"))
          .satisfies(e -> FenceContractIT.assertState(e, SqlStates.MISSING_TOKEN));
      c.rollback();
      session(c, "another-lock", 300L, null);
      assertThatThrownBy(() -> insertEvent(c, n.outbox(), "https://hooks.example/foreign"))
          .satisfies(e -> FenceContractIT.assertState(e, SqlStates.MISSING_TOKEN));
      c.rollback();
    }
    try (Connection c = connect()) {
      assertThat(count(c, n.business())).isEqualTo(1);
      assertThat(count(c, n.outbox())).isZero();
      assertThat(FenceContractIT.fenceToken(c, n.lock())).isEqualTo(200L);
    }
  }

  @Test
  void theRelayUpdatesDeliveryColumnsWithoutATokenButNoEventColumn() throws Exception {
    Names n = setUp();
    String id;
    try (Connection c = connect()) {
      session(c, n.lock(), 5L, null);
      insertEvent(c, n.outbox(), "https://hooks.example/a");
      id = (String) events(c, n.outbox()).get(0).get(OutboxSchema.EVENT_ID);
    }
    try (Connection relay = connect()) {
      String now = dialect() == SqlDialect.MYSQL ? "NOW(6)" : "CURRENT_TIMESTAMP";
      exec(relay, "UPDATE " + n.outbox() + " SET " + OutboxSchema.CLAIMED_BY + " = 'relay-1', "
          + OutboxSchema.CLAIMED_UNTIL + " = " + now + ", " + OutboxSchema.ATTEMPTS + " = "
          + OutboxSchema.ATTEMPTS + " + 1, " + OutboxSchema.LAST_ERROR + " = 'HTTP 503' WHERE "
          + OutboxSchema.EVENT_ID + " = '" + id + "'");
      exec(relay, "UPDATE " + n.outbox() + " SET " + OutboxSchema.STATE + " = '" + OutboxSchema.DELIVERED + "', "
          + OutboxSchema.DELIVERED_AT + " = " + now + ", " + OutboxSchema.NEXT_ATTEMPT_AT + " = " + now
          + " WHERE " + OutboxSchema.EVENT_ID + " = '" + id + "'");
      Map<String, Object> event = events(relay, n.outbox()).get(0);
      assertThat(event.get(OutboxSchema.STATE)).isEqualTo(OutboxSchema.DELIVERED);
      assertThat(((Number) event.get(OutboxSchema.ATTEMPTS)).intValue()).isEqualTo(1);
      for (String change : List.of(OutboxSchema.PAYLOAD + " = 'changed'", OutboxSchema.TOKEN + " = 999",
          OutboxSchema.TARGET + " = 'https://evil.example/'", OutboxSchema.KEY_SEQ + " = 42",
          OutboxSchema.FENCING + " = '999;" + n.lock() + "'")) {
        String column = change.substring(0, change.indexOf(' '));
        assertThatThrownBy(() -> exec(relay, "UPDATE " + n.outbox() + " SET " + change))
            .isInstanceOf(SQLException.class)
            .hasMessageContaining(column)
            .hasMessageContaining("cannot change")
            .satisfies(e -> FenceContractIT.assertState(e, "23514"));
      }
      // Even with a valid token: an event, once written, is what was committed.
      session(relay, n.lock(), 5L, null);
      assertThatThrownBy(() -> exec(relay, "UPDATE " + n.outbox() + " SET " + OutboxSchema.PAYLOAD + " = 'x'"))
          .hasMessageContaining("cannot change");
      assertThat(events(relay, n.outbox()).get(0).get(OutboxSchema.PAYLOAD)).isEqualTo("{}");
      // Retention: the operator deletes delivered events, no token needed.
      session(relay, null, null, null);
      exec(relay, "DELETE FROM " + n.outbox() + " WHERE " + OutboxSchema.STATE + " = 'delivered'");
      assertThat(count(relay, n.outbox())).isZero();
    }
  }

  @Test
  void eventsTheRelayCouldNotDeliverAreRefusedWithAClearMessage() throws Exception {
    Names n = setUp();
    try (Connection c = connect()) {
      session(c, n.lock(), 5L, null);
      Map<String, String> bad = new LinkedHashMap<>();
      bad.put("'smtp', 'mailto:a@b.example', NULL, NULL", "channel");
      bad.put("NULL, 'https://a.example/', NULL, NULL", "channel");
      bad.put("'http', 'ftp://a.example/', NULL, NULL", "not an absolute http(s) URL");
      bad.put("'http', NULL, NULL, NULL", "not an absolute http(s) URL");
      bad.put("'http', 'https://a.example/', 'PO ST', NULL", "not an HTTP method");
      bad.put("'kafka', 'bad topic', NULL, NULL", "not a topic name");
      bad.put("'kafka', 'orders', 'POST', NULL", "has no method");
      bad.put("'http', 'https://a.example/', NULL, 'no colon here'", "Name: value");
      bad.put("'http', 'https://a.example/', NULL, 'Fencing-Token: 999'", "Fencing-*");
      bad.put("'kafka', 'orders', NULL, 'Fencing: 999;" + n.lock() + "'", "Fencing-*");
      bad.put("'http', 'https://a.example/', NULL, 'X-A: 1\nfencing:999;" + n.lock() + "'", "Fencing-*");
      bad.put("'http', 'https://a.example/', NULL, 'X-A: 1\nidempotency-key: k'", "Idempotency-Key");
      for (Map.Entry<String, String> e : bad.entrySet()) {
        assertThatThrownBy(() -> exec(c, "INSERT INTO " + n.outbox() + " (" + OutboxSchema.CHANNEL + ", "
            + OutboxSchema.TARGET + ", " + OutboxSchema.METHOD + ", " + OutboxSchema.HEADERS + ", "
            + OutboxSchema.PAYLOAD + ") VALUES (" + e.getKey() + ", '{}')"))
            .as(e.getKey())
            .hasMessageContaining(e.getValue())
            .satisfies(x -> FenceContractIT.assertState(x, "23514"));
      }
      exec(c, "INSERT INTO " + n.outbox() + " (" + OutboxSchema.CHANNEL + ", " + OutboxSchema.TARGET + ", "
          + OutboxSchema.METHOD + ", " + OutboxSchema.HEADERS + ", " + OutboxSchema.PAYLOAD + ") VALUES ('http', "
          + "'HTTPS://a.example/x?y=1', 'put', 'X-A: 1\r\nX-B:two words\n', NULL)");
      assertThat(events(c, n.outbox())).singleElement()
          .satisfies(e -> assertThat(e.get(OutboxSchema.METHOD)).isEqualTo("PUT"));
    }
  }

  /**
   * B writes an event of key K and commits while A, which started first and wrote its business row first, waits for
   * B's counter row: A's event gets the higher key_seq, as A commits later. Events of another key do not wait.
   */
  @Test
  void keySeqFollowsCommitOrderPerKey() throws Exception {
    Names n = setUp();
    try (Connection c = connect()) {
      // The holder's first write moves the fence to its token (an exclusive step); its threads then write side by side.
      session(c, n.lock(), 7L, null);
      exec(c, "INSERT INTO " + n.business() + " (id, amount) VALUES (0, 0)");
    }
    ExecutorService pool = Executors.newSingleThreadExecutor();
    try (Connection a = connect(); Connection b = connect()) {
      a.setAutoCommit(false);
      b.setAutoCommit(false);
      session(a, n.lock(), 7L, null);
      session(b, n.lock(), 7L, null);
      exec(a, "INSERT INTO " + n.business() + " (id, amount) VALUES (1, 10)");
      insertKeyed(b, n.outbox(), "orders", "k1", "from-b");
      CountDownLatch started = new CountDownLatch(1);
      Future<?> aWrite = pool.submit(() -> {
        started.countDown();
        insertKeyed(a, n.outbox(), "orders", "k1", "from-a");
        return null;
      });
      started.await();
      if (keyWritersSerialize()) {
        assertThatThrownBy(() -> aWrite.get(700, TimeUnit.MILLISECONDS)).isInstanceOf(TimeoutException.class);
      }
      // Another key does not wait for either.
      insertKeyed(b, n.outbox(), "orders", "k2", "other-key");
      b.commit();
      aWrite.get(20, TimeUnit.SECONDS);
      a.commit();
    } finally {
      pool.shutdownNow();
    }
    try (Connection c = connect()) {
      Map<String, Long> seq = new LinkedHashMap<>();
      for (Map<String, Object> e : events(c, n.outbox())) {
        seq.put((String) e.get(OutboxSchema.PAYLOAD), ((Number) e.get(OutboxSchema.KEY_SEQ)).longValue());
      }
      assertThat(seq).containsEntry("from-b", 1L).containsEntry("from-a", 2L).containsEntry("other-key", 1L);
    }
  }

  /** A rolled-back event leaves no gap: the next writer of the key gets the number it would have had. */
  @Test
  void aRolledBackEventLeavesNoGap() throws Exception {
    Names n = setUp();
    try (Connection c = connect()) {
      session(c, n.lock(), 7L, null);
      insertKeyed(c, n.outbox(), "orders", "k", "first");
      c.setAutoCommit(false);
      insertKeyed(c, n.outbox(), "orders", "k", "rolled-back");
      c.rollback();
      insertKeyed(c, n.outbox(), "orders", "k", "second");
      insertKeyed(c, n.outbox(), "orders", "k", "third");
      c.commit();
      Map<String, Long> seq = new LinkedHashMap<>();
      for (Map<String, Object> e : events(c, n.outbox())) {
        seq.put((String) e.get(OutboxSchema.PAYLOAD), ((Number) e.get(OutboxSchema.KEY_SEQ)).longValue());
      }
      assertThat(seq).containsExactlyInAnyOrderEntriesOf(Map.of("first", 1L, "second", 2L, "third", 3L));
    }
  }

  /**
   * The fencing column holds what the Kafka header {@code fencing} carries for the session's token, lock and grant,
   * byte for byte as {@link TokenGrammar#kafkaValue} writes it: a change-data-capture router places it as that header.
   */
  @Test
  void theFencingColumnIsTheKafkaHeaderValueOfTheSessionsTokenLockAndGrant() throws Exception {
    Names n = setUp();
    String longLock = "svc.pay_" + "L".repeat(TokenGrammar.MAX_LOCK_LENGTH - 8);
    String second = n.outbox() + "_b";
    try (Connection c = connect()) {
      new OutboxInstaller(c).install(new SqlOutbox(TableName.parse(second), longLock));
    }
    record Case(String outbox, String lock, long token, String grant) {
    }
    List<Case> cases = List.of(new Case(n.outbox(), n.lock(), 1, null), new Case(n.outbox(), n.lock(), 2, "g-2"),
        new Case(n.outbox(), n.lock(), 3, "a;b;c"), new Case(n.outbox(), n.lock(), 4, ";"),
        new Case(n.outbox(), n.lock(), 5, "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"),
        new Case(n.outbox(), n.lock(), 6, "G".repeat(TokenGrammar.MAX_GRANT_LENGTH)),
        new Case(n.outbox(), n.lock(), Long.MAX_VALUE, "last;one"), new Case(second, longLock, 9, "x;y"),
        new Case(second, longLock, Long.MAX_VALUE, null));
    try (Connection c = connect()) {
      for (Case k : cases) {
        session(c, k.lock(), k.token(), k.grant());
        insertKeyed(c, k.outbox(), "orders", "k", "case-" + k.token() + "-" + k.grant());
      }
      for (Case k : cases) {
        Object fencing = events(c, k.outbox()).stream()
            .filter(e -> e.get(OutboxSchema.PAYLOAD).equals("case-" + k.token() + "-" + k.grant()))
            .findFirst().orElseThrow().get(OutboxSchema.FENCING);
        assertThat(fencing).as(k.toString()).isEqualTo(TokenGrammar.kafkaValue(k.token(), k.lock(), k.grant()));
        assertThat(TokenGrammar.kafkaFields((String) fencing)).as(k.toString())
            .containsExactly(Long.toString(k.token()), k.lock(), k.grant());
      }
    }
  }

  /** Makes the outbox one an earlier release installed: no fencing column, the triggers of then. */
  void earlierRelease(Connection c, Names n) throws SQLException {
    exec(c, "ALTER TABLE " + n.outbox() + " DROP COLUMN " + OutboxSchema.FENCING);
  }

  /**
   * An outbox of an earlier release, without the fencing column, with events: a re-install adds the column and the
   * trigger that fills it; the earlier events keep NULL, the new ones carry the value, and the column is guarded.
   */
  @Test
  void aReinstallAddsTheFencingColumnToAnOutboxOfAnEarlierRelease() throws Exception {
    Names n = setUp();
    try (Connection c = connect()) {
      earlierRelease(c, n);
      session(c, n.lock(), 3L, "g-3");
      insertKeyed(c, n.outbox(), "orders", "k", "before");
      assertThat(events(c, n.outbox()).get(0)).doesNotContainKey(OutboxSchema.FENCING);

      SqlOutbox outbox = new SqlOutbox(TableName.parse(n.outbox()), n.lock());
      assertThat(new OutboxInstaller(c).install(outbox).summary()).startsWith("installed: tokened outbox");
      insertKeyed(c, n.outbox(), "orders", "k", "after");
      Map<String, Object> fencing = new LinkedHashMap<>();
      for (Map<String, Object> e : events(c, n.outbox())) {
        fencing.put((String) e.get(OutboxSchema.PAYLOAD), e.get(OutboxSchema.FENCING));
      }
      assertThat(fencing).containsExactly(entry("before", null),
          entry("after", TokenGrammar.kafkaValue(3, n.lock(), "g-3")));
      assertThatThrownBy(() -> exec(c, "UPDATE " + n.outbox() + " SET " + OutboxSchema.FENCING + " = '4;"
          + n.lock() + "'")).hasMessageContaining("cannot change").hasMessageContaining(OutboxSchema.FENCING);
      assertThat(new OutboxInstaller(c).install(outbox).summary()).startsWith("already installed: tokened outbox");
    }
  }

  /** A re-install for another lock replaces the triggers: the old lock's tokens no longer write events. */
  @Test
  void aReinstallForAnotherLockMovesTheOutboxToIt() throws Exception {
    Names n = setUp();
    String other = n.lock() + "-b";
    try (Connection c = connect()) {
      assertThat(new OutboxInstaller(c).install(new SqlOutbox(TableName.parse(n.outbox()), other)).summary())
          .startsWith("installed: tokened outbox").contains("'" + other + "'");
      session(c, n.lock(), 5L, null);
      assertThatThrownBy(() -> insertEvent(c, n.outbox(), "https://hooks.example/old-lock"))
          .satisfies(e -> FenceContractIT.assertState(e, SqlStates.MISSING_TOKEN));
      session(c, other, 5L, null);
      insertEvent(c, n.outbox(), "https://hooks.example/new-lock");
      assertThat(events(c, n.outbox())).singleElement()
          .satisfies(e -> assertThat(e.get(OutboxSchema.LOCK)).isEqualTo(other));
    }
  }

  @Test
  void uninstallIsRefusedWhileEventsArePendingAndRemovesTheOutboxAfter() throws Exception {
    Names n = setUp();
    try (Connection c = connect()) {
      session(c, n.lock(), 9L, null);
      insertEvent(c, n.outbox(), "https://hooks.example/a");
      OutboxInstaller installer = new OutboxInstaller(c);
      assertThatThrownBy(() -> installer.uninstall(TableName.parse(n.outbox())))
          .hasMessageContaining("1 pending event");
      assertThat(count(c, n.outbox())).isEqualTo(1);
      // A fence's install or uninstall on the outbox would take its triggers away.
      assertThatThrownBy(() -> new SqlFenceInstaller(c).uninstall(TableName.parse(n.outbox())))
          .hasMessageContaining("tokened outbox");
      assertThatThrownBy(() -> new SqlFenceInstaller(c).install(new SqlFence(TableName.parse(n.outbox()),
          n.lock(), false, false))).hasMessageContaining("tokened outbox");
      // A table that is not an outbox is never taken for one.
      assertThatThrownBy(() -> installer.install(new SqlOutbox(TableName.parse(n.business()), n.lock())))
          .hasMessageContaining("has a SQL fence");
      assertThatThrownBy(() -> installer.uninstall(TableName.parse(n.business())))
          .hasMessageContaining("not a tokened outbox");
      exec(c, "DELETE FROM " + n.outbox());
      assertThat(installer.uninstall(TableName.parse(n.outbox())).summary()).startsWith("removed: tokened outbox");
      assertThat(tableExists(c, n.outbox())).isFalse();
      assertThat(tableExists(c, n.outbox() + "_key")).isFalse();
      // The business table's fence stays.
      assertThat(SqlFenceInstaller.isFenced(c)).isTrue();
    }
  }

  // ------------------------------------------------------------------------------------------- processed events

  @Test
  void markFirstIsTrueOnceAndCommitsWithTheEffect() throws Exception {
    String table = "processed_" + NAMES.incrementAndGet() + "_" + System.nanoTime() % 100000;
    try (Connection c = connect()) {
      exec(c, "CREATE TABLE effects_" + table + " (id VARCHAR(64) PRIMARY KEY)");
      assertThat(new OutboxInstaller(c).installProcessedEvents(TableName.parse(table)).summary())
          .startsWith("installed: processed-events table");
      c.setAutoCommit(false);
      assertThat(ProcessedEvents.markFirst(c, table, "e-1")).isTrue();
      exec(c, "INSERT INTO effects_" + table + " VALUES ('e-1')");
      c.rollback(); // the effect failed: the mark goes with it, and the redelivery applies the event
      assertThat(ProcessedEvents.markFirst(c, table, "e-1")).isTrue();
      exec(c, "INSERT INTO effects_" + table + " VALUES ('e-1')");
      c.commit();
      assertThat(ProcessedEvents.duplicatesSkipped(table)).as("no duplicate yet, a rolled-back mark is none").isZero();
      assertThat(ProcessedEvents.markFirst(c, table, "e-1")).isFalse();
      assertThat(ProcessedEvents.markFirst(c, table, "e-2")).isTrue();
      assertThat(ProcessedEvents.markFirst(c, table, "e-1")).isFalse();
      c.commit();
      c.setAutoCommit(true);
      assertThat(count(c, table)).isEqualTo(2);
      assertThat(count(c, "effects_" + table)).isEqualTo(1);
      assertThat(ProcessedEvents.duplicatesSkipped(table)).as("each false counted").isEqualTo(2);
      assertThat(ProcessedEvents.prometheusText())
          .contains("# TYPE fencing_outbox_duplicates_skipped_total counter\n")
          .contains("\nfencing_outbox_duplicates_skipped_total{table=\"" + table + "\"} 2\n");
      assertThatThrownBy(() -> ProcessedEvents.markFirst(c, table, "x".repeat(65)))
          .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("1 to 64");
      assertThatThrownBy(() -> ProcessedEvents.markFirst(c, "no such; table", "e"))
          .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("invalid table name");
      OutboxInstaller installer = new OutboxInstaller(c);
      assertThatThrownBy(() -> installer.uninstallProcessedEvents(TableName.parse(table)))
          .hasMessageContaining("holds 2 event ids");
      exec(c, "DELETE FROM " + table);
      assertThat(installer.uninstallProcessedEvents(TableName.parse(table)).summary())
          .startsWith("removed: processed-events table");
    }
  }

  /** Two transactions mark the same id at once: the second waits for the first, and exactly one gets true. */
  @Test
  void concurrentMarksOfOneIdGiveExactlyOneTrue() throws Exception {
    String table = "processed_" + NAMES.incrementAndGet() + "_" + System.nanoTime() % 100000;
    try (Connection c = connect()) {
      new OutboxInstaller(c).installProcessedEvents(TableName.parse(table));
    }
    ExecutorService pool = Executors.newFixedThreadPool(2);
    try (Connection a = connect(); Connection b = connect()) {
      for (int round = 0; round < 5; round++) {
        String id = "evt-" + round;
        CountDownLatch go = new CountDownLatch(1);
        List<Future<Boolean>> results = new ArrayList<>();
        for (Connection c : List.of(a, b)) {
          results.add(pool.submit(() -> {
            c.setAutoCommit(false);
            go.await();
            boolean first = ProcessedEvents.markFirst(c, table, id);
            Thread.sleep(100); // the effect
            c.commit();
            return first;
          }));
        }
        go.countDown();
        int trues = 0;
        for (Future<Boolean> f : results) {
          trues += f.get(30, TimeUnit.SECONDS) ? 1 : 0;
        }
        assertThat(trues).as("round " + round).isEqualTo(1);
      }
    } finally {
      pool.shutdownNow();
    }
    try (Connection c = connect()) {
      assertThat(count(c, table)).isEqualTo(5);
    }
    assertThat(ProcessedEvents.duplicatesSkipped(table)).as("the loser of each round").isEqualTo(5);
  }

  // ------------------------------------------------------------------------------------------------------ helpers

  static void exec(Connection c, String sql) throws SQLException {
    try (Statement st = c.createStatement()) {
      st.execute(sql);
    }
  }

  static void insertEvent(Connection c, String outbox, String url) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + outbox + " (" + OutboxSchema.CHANNEL + ", "
        + OutboxSchema.TARGET + ", " + OutboxSchema.PAYLOAD + ") VALUES ('http', ?, '{}')")) {
      ps.setString(1, url);
      ps.executeUpdate();
    }
  }

  static void insertKeyed(Connection c, String outbox, String topic, String key, String payload)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + outbox + " (" + OutboxSchema.CHANNEL + ", "
        + OutboxSchema.TARGET + ", " + OutboxSchema.MESSAGE_KEY + ", " + OutboxSchema.PAYLOAD
        + ") VALUES ('kafka', ?, ?, ?)")) {
      ps.setString(1, topic);
      ps.setString(2, key);
      ps.setString(3, payload);
      ps.executeUpdate();
    }
  }

  static List<Map<String, Object>> events(Connection c, String outbox) throws SQLException {
    List<Map<String, Object>> out = new ArrayList<>();
    try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT * FROM " + outbox
        + " ORDER BY " + OutboxSchema.CREATED_AT + ", " + OutboxSchema.KEY_SEQ)) {
      while (rs.next()) {
        Map<String, Object> row = new LinkedHashMap<>();
        for (int i = 1; i <= rs.getMetaData().getColumnCount(); i++) {
          row.put(rs.getMetaData().getColumnName(i).toLowerCase(Locale.ROOT), rs.getObject(i));
        }
        out.add(row);
      }
    }
    return out;
  }

  static int count(Connection c, String table) throws SQLException {
    try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT COUNT(*) FROM " + table)) {
      rs.next();
      return rs.getInt(1);
    }
  }

  boolean tableExists(Connection c, String table) throws SQLException {
    try (ResultSet rs = c.getMetaData().getTables(dialect() == SqlDialect.MYSQL ? c.getCatalog() : null, null,
        dialect().fold(table), null)) {
      return rs.next();
    }
  }
}
