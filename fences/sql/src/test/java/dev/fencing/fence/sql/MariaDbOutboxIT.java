package dev.fencing.fence.sql;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.fence.store.SqlDialect;
import dev.fencing.protocol.OutboxSchema;
import dev.fencing.testing.MariaDbServer;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
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
}
