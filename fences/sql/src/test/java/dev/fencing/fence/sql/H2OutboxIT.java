package dev.fencing.fence.sql;

import dev.fencing.fence.store.SqlDialect;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;

/** The outbox contract on an in-memory H2 database, with the Java trigger classes from this module. */
class H2OutboxIT extends OutboxContractIT {

  private static final String URL = "jdbc:h2:mem:outbox-it;DB_CLOSE_DELAY=-1;LOCK_TIMEOUT=20000";

  @Override
  Connection connect() throws SQLException {
    return DriverManager.getConnection(URL);
  }

  @Override
  void session(Connection c, String lock, Long token, String grant) throws SQLException {
    try (Statement st = c.createStatement()) {
      st.execute("SET @fencing_lock = " + (lock == null ? "NULL" : "'" + lock + "'"));
      st.execute("SET @fencing_token = " + (token == null ? "NULL" : token));
      st.execute("SET @fencing_grant = " + (grant == null ? "NULL" : "'" + grant.replace("'", "''") + "'"));
    }
  }

  @Override
  SqlDialect dialect() {
    return SqlDialect.H2;
  }
}
