package dev.fencing.outbox;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * What the relay's integration tests share: a real HTTP receiver, outbox tables, relays closed after each test, and
 * transactions with the session's fencing values. Subclasses give the database.
 */
abstract class RelayTestBase {
  private static final AtomicInteger TABLES = new AtomicInteger();
  static final Duration WAIT = Duration.ofSeconds(20);

  Receiver receiver;
  /** The lock of the test's outbox: one per table, so that each test's tokens start afresh. */
  String lock;
  final List<OutboxRelay> relays = new ArrayList<>();
  final ByteArrayOutputStream logs = new ByteArrayOutputStream();

  abstract Connection connect() throws SQLException;

  @BeforeEach
  void startReceiver() throws Exception {
    receiver = new Receiver();
  }

  @AfterEach
  void stop() {
    relays.forEach(OutboxRelay::close);
    receiver.close();
    System.out.print(logs.toString(StandardCharsets.UTF_8));
  }

  String newTable() throws Exception {
    return newTable("outbox_" + ProcessHandle.current().pid() + "_" + TABLES.incrementAndGet());
  }

  String newTable(String table) throws Exception {
    lock = "orders-" + table;
    try (Connection c = connect()) {
      OutboxTables.create(c, table, lock);
    }
    return table;
  }

  OutboxRelay relay(String table, Consumer<OutboxRelay.Builder> settings) throws SQLException {
    return relay(this::connect, table, settings);
  }

  OutboxRelay relay(OutboxRelay.ConnectionSource connections, String table, Consumer<OutboxRelay.Builder> settings)
      throws SQLException {
    OutboxRelay.Builder b = OutboxRelay.builder(connections, table).pollInterval(Duration.ofMillis(200))
        .backoff(Duration.ofMillis(200)).claimTimeout(Duration.ofSeconds(10)).requestTimeout(Duration.ofSeconds(5))
        .statsInterval(Duration.ofMillis(200)).log(new PrintStream(logs, true, StandardCharsets.UTF_8));
    settings.accept(b);
    OutboxRelay relay = b.build().start();
    relays.add(relay);
    return relay;
  }

  interface Writes {
    void write(Connection c) throws SQLException;
  }

  /** One transaction with the session's lock, token and grant set as the agent sets them; committed or not. */
  void transaction(long token, String grant, boolean commit, Writes writes) throws SQLException {
    try (Connection c = connect()) {
      OutboxTables.session(c, lock, token, grant);
      c.setAutoCommit(false);
      writes.write(c);
      if (commit) {
        c.commit();
      } else {
        c.rollback();
      }
    }
  }

  List<OutboxTables.Row> rows(String table) throws SQLException {
    try (Connection c = connect()) {
      return OutboxTables.rows(c, table);
    }
  }

  OutboxTables.Row row(String table, String eventId) throws SQLException {
    try (Connection c = connect()) {
      return OutboxTables.row(c, table, eventId);
    }
  }

  Map<String, String> states(String table) {
    return rowsQuietly(table).stream().collect(Collectors.toMap(OutboxTables.Row::eventId,
        OutboxTables.Row::state));
  }

  List<OutboxTables.Row> rowsQuietly(String table) {
    try {
      return rows(table);
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }
}
