package dev.fencing.agent.instrumentation.jdbc;

import static dev.fencing.protocol.SessionVariables.PG_GRANT;
import static dev.fencing.protocol.SessionVariables.PG_LOCK;
import static dev.fencing.protocol.SessionVariables.PG_SIGNATURE;
import static dev.fencing.protocol.SessionVariables.PG_TOKEN;
import static dev.fencing.protocol.SessionVariables.USER_GRANT;
import static dev.fencing.protocol.SessionVariables.USER_LOCK;
import static dev.fencing.protocol.SessionVariables.USER_SIGNATURE;
import static dev.fencing.protocol.SessionVariables.USER_TOKEN;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.Locale;

/** How a database session is made to carry (lock, token): docs/DESIGN.md section 5. */
enum SessionDialect {
  /**
   * Custom settings fencing.lock / fencing.token (and fencing.signature, fencing.grant): session scope
   * ({@code is_local = false}) on a direct connection, transaction scope ({@code true}) behind a transaction pooler,
   * where the next transaction may run on another client's server session.
   */
  POSTGRESQL {
    @Override
    void setPair(Connection c, String lock, long token, String signature, String grant, boolean local,
        long idleTimeoutMillis) throws SQLException {
      String scope = local ? "true)" : "false)";
      StringBuilder sql = new StringBuilder("SELECT set_config('" + PG_LOCK + "', ?, ").append(scope)
          .append(", set_config('" + PG_TOKEN + "', ?, ").append(scope);
      if (signature != null) {
        sql.append(", set_config('" + PG_SIGNATURE + "', ?, ").append(scope);
      }
      if (grant != null) {
        sql.append(", set_config('" + PG_GRANT + "', ?, ").append(scope);
      }
      if (idleTimeoutMillis >= 0) {
        sql.append(", set_config('idle_in_transaction_session_timeout', ?, ").append(scope);
      }
      try (PreparedStatement ps = c.prepareStatement(sql.toString())) {
        int i = 1;
        ps.setString(i++, lock);
        ps.setString(i++, Long.toString(token));
        if (signature != null) {
          ps.setString(i++, signature);
        }
        if (grant != null) {
          ps.setString(i++, grant);
        }
        if (idleTimeoutMillis >= 0) {
          ps.setString(i, Long.toString(idleTimeoutMillis));
        }
        ps.executeQuery().close();
      }
    }

    @Override
    void clearPair(Connection c, boolean local) throws SQLException {
      String scope = local ? "true)" : "false)";
      try (PreparedStatement ps = c.prepareStatement("SELECT set_config('" + PG_LOCK + "', '', " + scope
          + ", set_config('" + PG_TOKEN + "', '', " + scope + ", set_config('" + PG_GRANT + "', '', " + scope)) {
        ps.executeQuery().close();
      }
    }

    @Override
    boolean truncateFenced() {
      return true;
    }

    @Override
    String currentSchemaQuery() {
      return "SELECT current_schema()";
    }
  },
  /**
   * User variables @fencing_lock / @fencing_token (and @fencing_signature, @fencing_grant); always session scope (a
   * MySQL-protocol pooler such as ProxySQL keeps a connection to one backend once user variables are set).
   */
  MYSQL {
    @Override
    void setPair(Connection c, String lock, long token, String signature, String grant, boolean local,
        long idleTimeoutMillis) throws SQLException {
      StringBuilder sql = new StringBuilder("SET " + USER_LOCK + " = ?, " + USER_TOKEN + " = ?");
      if (signature != null) {
        sql.append(", " + USER_SIGNATURE + " = ?");
      }
      if (grant != null) {
        sql.append(", " + USER_GRANT + " = ?");
      }
      try (PreparedStatement ps = c.prepareStatement(sql.toString())) {
        int i = 1;
        ps.setString(i++, lock);
        ps.setLong(i++, token);
        if (signature != null) {
          ps.setString(i++, signature);
        }
        if (grant != null) {
          ps.setString(i, grant);
        }
        ps.execute();
      }
    }

    @Override
    void clearPair(Connection c, boolean local) throws SQLException {
      try (PreparedStatement ps = c.prepareStatement(
          "SET " + USER_LOCK + " = NULL, " + USER_TOKEN + " = NULL, " + USER_GRANT + " = NULL")) {
        ps.execute();
      }
    }

    @Override
    String currentSchemaQuery() {
      return "SELECT DATABASE()";
    }

    /**
     * MariaDB's idle_write_transaction_timeout (seconds, rounded up: 0 would switch it off), in a statement of its
     * own: MySQL has no such variable, and a failed SET must not take the pair with it.
     */
    @Override
    void boundIdleTransactions(Connection c, long idleTimeoutMillis) throws SQLException {
      try (PreparedStatement ps = c.prepareStatement(
          "SET SESSION idle_write_transaction_timeout = " + (idleTimeoutMillis + 999) / 1000)) {
        ps.execute();
      }
    }
  },
  /** User variables @fencing_lock / @fencing_token (and @fencing_signature, @fencing_grant), one per SET in H2. */
  H2 {
    @Override
    void setPair(Connection c, String lock, long token, String signature, String grant, boolean local,
        long idleTimeoutMillis) throws SQLException {
      try (PreparedStatement l = c.prepareStatement("SET " + USER_LOCK + " = ?");
          PreparedStatement t = c.prepareStatement("SET " + USER_TOKEN + " = ?")) {
        l.setString(1, lock);
        l.execute();
        t.setLong(1, token);
        t.execute();
      }
      if (signature != null) {
        try (PreparedStatement s = c.prepareStatement("SET " + USER_SIGNATURE + " = ?")) {
          s.setString(1, signature);
          s.execute();
        }
      }
      if (grant != null) {
        try (PreparedStatement g = c.prepareStatement("SET " + USER_GRANT + " = ?")) {
          g.setString(1, grant);
          g.execute();
        }
      }
    }

    @Override
    void clearPair(Connection c, boolean local) throws SQLException {
      try (PreparedStatement l = c.prepareStatement("SET " + USER_LOCK + " = NULL");
          PreparedStatement t = c.prepareStatement("SET " + USER_TOKEN + " = NULL");
          PreparedStatement g = c.prepareStatement("SET " + USER_GRANT + " = NULL")) {
        l.execute();
        t.execute();
        g.execute();
      }
    }

    @Override
    String currentSchemaQuery() {
      return "SELECT SCHEMA()";
    }
  },
  /** A database the agent cannot tag: writes are decided (and blocked) but carry no token. */
  UNKNOWN {
    @Override
    void setPair(Connection c, String lock, long token, String signature, String grant, boolean local,
        long idleTimeoutMillis) {}

    @Override
    void clearPair(Connection c, boolean local) {}

    @Override
    String currentSchemaQuery() {
      return null;
    }
  };

  /**
   * Sets the pair, and the signature and grant id when they are not null (without them nothing extra is sent).
   * {@code local}: for the current transaction only (PostgreSQL). {@code idleTimeoutMillis} >= 0 also bounds how long
   * the session may stay idle inside a transaction, in the same statement (no extra round trip; PostgreSQL only, see
   * {@link #boundIdleTransactions}); -1 leaves it.
   */
  abstract void setPair(Connection c, String lock, long token, String signature, String grant, boolean local,
      long idleTimeoutMillis) throws SQLException;

  /**
   * Forgets the pair, so an untagged statement on a pooled connection cannot borrow an earlier caller's token. A
   * signature left behind is harmless: it vouches only for the (lock, token) it was made for.
   */
  abstract void clearPair(Connection c, boolean local) throws SQLException;

  /**
   * Once per session where the pair does not carry it ({@link #setPair}'s idleTimeoutMillis): bounds how long the
   * session may stay idle inside a transaction that wrote. PostgreSQL sets it with the pair; H2 has no such bound.
   */
  void boundIdleTransactions(Connection c, long idleTimeoutMillis) throws SQLException {}

  /** True when the dialect's fence triggers fire on TRUNCATE (PostgreSQL only: MariaDB and H2 fire none). */
  boolean truncateFenced() {
    return false;
  }

  /** The query that returns the schema (or database) an unqualified table name is looked up in first. */
  abstract String currentSchemaQuery();

  static SessionDialect of(String jdbcUrl) {
    String u = jdbcUrl == null ? "" : jdbcUrl.toLowerCase(Locale.ROOT);
    if (u.startsWith("jdbc:postgresql:") || u.startsWith("jdbc:pgsql:")) {
      return POSTGRESQL;
    }
    if (u.startsWith("jdbc:mysql:") || u.startsWith("jdbc:mariadb:")) {
      return MYSQL;
    }
    if (u.startsWith("jdbc:h2:")) {
      return H2;
    }
    return UNKNOWN;
  }
}
