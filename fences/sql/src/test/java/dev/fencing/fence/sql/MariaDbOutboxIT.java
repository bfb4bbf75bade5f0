package dev.fencing.fence.sql;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.fence.store.SqlDialect;
import dev.fencing.protocol.OutboxSchema;
import dev.fencing.testing.MariaDbServer;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The outbox contract on a real MariaDB (InnoDB, REPEATABLE READ by default). */
class MariaDbOutboxIT extends OutboxContractIT {

  private static MariaDbServer server;

  @BeforeAll
  static void startServer() {
    server = MariaDbServer.start();
  }

  @AfterAll
  static void stopServer() {
    if (server != null) {
      server.close();
    }
  }

  @Override
  Connection connect() throws SQLException {
    Connection c = DriverManager.getConnection(server.jdbcUrl());
    exec(c, "SET SESSION innodb_lock_wait_timeout = 30"); // a test that waits wrongly fails instead of hanging
    return c;
  }

  @Override
  void session(Connection c, String lock, Long token, String grant) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SET @fencing_lock = ?, @fencing_token = ?, @fencing_grant = ?")) {
      ps.setString(1, lock);
      if (token == null) {
        ps.setNull(2, java.sql.Types.BIGINT);
      } else {
        ps.setLong(2, token);
      }
      ps.setString(3, grant);
      ps.execute();
    }
  }

  @Override
  SqlDialect dialect() {
    return SqlDialect.MYSQL;
  }

  /** An earlier release's triggers (their names, without the fencing column's lines) and no fencing column. */
  @Override
  void earlierRelease(Connection c, Names n) throws SQLException {
    OutboxDdl ddl = new OutboxDdl(SqlDialect.MYSQL);
    SqlOutbox outbox = new SqlOutbox(new OutboxInstaller(c).locate(TableName.parse(n.outbox())), n.lock());
    List<String> names = ddl.triggerNames(outbox);
    FenceDialect fence = FenceDialect.of(SqlDialect.MYSQL);
    List<String> earlier = List.of(fence.hashedName(outbox.fence(), "obi", 63, "|utc"),
        fence.hashedName(outbox.fence(), "obu", 63));
    for (int i = 0; i < 2; i++) {
      String name = names.get(i);
      String sql = ddl.install(outbox).stream().filter(st -> st.object().equals(name)).findFirst().orElseThrow()
          .sql();
      String then = sql.replace(name, earlier.get(i))
          .replaceAll("(?m)^( *-- The Kafka header's value.*\n)? *SET NEW\\.fencing = .*\n", "")
          .replace(",\n    IF(NEW.fencing <=> OLD.fencing, NULL, 'fencing'))", ")");
      assertThat(then).doesNotContain("fencing <=>").doesNotContain("NEW.fencing =");
      exec(c, "DROP TRIGGER " + name);
      exec(c, then);
    }
    super.earlierRelease(c, n);
  }

  /** The same channel, target and key give the same order_key on every database (the SHA-256 of the same bytes). */
  @Test
  void theOrderKeyIsTheSha256OfChannelTargetAndKey() throws Exception {
    Names n = setUp();
    try (Connection c = connect()) {
      session(c, n.lock(), 1L, null);
      insertKeyed(c, n.outbox(), "orders", "k\u00e9", "x");
      assertThat(events(c, n.outbox()).get(0).get(OutboxSchema.ORDER_KEY))
          .isEqualTo(H2OutboxTrigger.orderKey("kafka", "orders", "k\u00e9"));
    }
  }

  /**
   * An outbox whose insert trigger wrote the session's local time (as installs of earlier releases do): a re-install
   * replaces that trigger, and the events written after carry UTC times, whatever the writer's time zone.
   */
  @Test
  void aReinstallReplacesAnInsertTriggerThatWroteLocalTimes() throws Exception {
    Names n = setUp();
    try (Connection c = connect()) {
      OutboxInstaller installer = new OutboxInstaller(c);
      SqlOutbox outbox = new SqlOutbox(installer.locate(TableName.parse(n.outbox())), n.lock());
      List<String> names = new OutboxDdl(SqlDialect.MYSQL).triggerNames(outbox);
      String earlier = FenceDialect.of(SqlDialect.MYSQL).hashedName(outbox.fence(), "obi", 63);
      String trigger = new OutboxDdl(SqlDialect.MYSQL).install(outbox).stream()
          .filter(st -> st.object().equals(names.get(0))).findFirst().orElseThrow().sql();
      exec(c, "DROP TRIGGER " + names.get(0));
      exec(c, trigger.replace(names.get(0), earlier).replace("UTC_TIMESTAMP(6)", "NOW(6)"));
      exec(c, "SET time_zone = '+09:00'");
      session(c, n.lock(), 1L, null);
      insertEvent(c, n.outbox(), "https://hooks.example/before");
      assertThat(secondsAheadOfUtc(c, n.outbox(), "https://hooks.example/before")).isBetween(32340L, 32400L);

      assertThat(installer.install(outbox).summary()).startsWith("installed: tokened outbox");
      insertEvent(c, n.outbox(), "https://hooks.example/after");
      assertThat(secondsAheadOfUtc(c, n.outbox(), "https://hooks.example/after")).isBetween(-60L, 0L);
      List<String> triggers = new ArrayList<>();
      try (PreparedStatement ps = c.prepareStatement("SELECT trigger_name FROM information_schema.triggers"
          + " WHERE event_object_schema = DATABASE() AND event_object_table = ?")) {
        ps.setString(1, n.outbox());
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            triggers.add(rs.getString(1));
          }
        }
      }
      assertThat(triggers).containsExactlyInAnyOrderElementsOf(names);
    }
  }

  /** How far the event's created_at and next_attempt_at (the later) are ahead of the database's UTC clock. */
  private static long secondsAheadOfUtc(Connection c, String outbox, String target) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT TIMESTAMPDIFF(SECOND, UTC_TIMESTAMP(6), GREATEST("
        + OutboxSchema.CREATED_AT + ", " + OutboxSchema.NEXT_ATTEMPT_AT + ")) FROM " + outbox + " WHERE "
        + OutboxSchema.TARGET + " = ?")) {
      ps.setString(1, target);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }
}
