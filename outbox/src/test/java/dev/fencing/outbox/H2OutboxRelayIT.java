package dev.fencing.outbox;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;

/** The relay's contract on H2 (in memory, in this JVM): FOR UPDATE SKIP LOCKED, polling. */
class H2OutboxRelayIT extends OutboxRelayContractIT {
  private static final String URL = "jdbc:h2:mem:outbox_relay;DB_CLOSE_DELAY=-1";

  @Override
  Connection connect() throws SQLException {
    return DriverManager.getConnection(URL);
  }
}
