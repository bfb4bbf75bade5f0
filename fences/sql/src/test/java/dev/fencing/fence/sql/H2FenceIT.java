package dev.fencing.fence.sql;

import dev.fencing.fence.store.SqlDialect;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;

/** The fence contract on an in-memory H2 database, with the Java trigger class from this module. */
class H2FenceIT extends FenceContractIT {

  private static final String URL = "jdbc:h2:mem:fencing-it;DB_CLOSE_DELAY=-1;LOCK_TIMEOUT=20000";

  @Override
  Connection connect() throws SQLException {
    return DriverManager.getConnection(URL);
  }

  @Override
  void session(Connection c, String lock, Object token) throws SQLException {
    try (Statement st = c.createStatement()) {
      if (lock != null) {
        st.execute("SET @fencing_lock = '" + lock + "'");
      }
      if (token instanceof Long) {
        st.execute("SET @fencing_token = " + token);
      } else if (token != null) {
        st.execute("SET @fencing_token = '" + token.toString().replace("'", "''") + "'");
      }
    }
  }

  @Override
  void grant(Connection c, String grant) throws SQLException {
    try (Statement st = c.createStatement()) {
      st.execute("SET @fencing_grant = " + (grant == null ? "NULL" : "'" + grant.replace("'", "''") + "'"));
    }
  }

  @Override
  SqlDialect dialect() {
    return SqlDialect.H2;
  }

  @Override
  int triggerCount(Connection c, String table) throws SQLException {
    return count(c, "SELECT COUNT(DISTINCT TRIGGER_NAME) FROM INFORMATION_SCHEMA.TRIGGERS"
        + " WHERE EVENT_OBJECT_TABLE = UPPER(?)", table);
  }

  @Override
  int fenceObjects(Connection c, String schema) throws SQLException {
    return count(c, "SELECT COUNT(*) FROM INFORMATION_SCHEMA.TABLES WHERE TABLE_SCHEMA = UPPER(?)"
        + " AND TABLE_NAME LIKE 'FENCING%'", schema);
  }
}
