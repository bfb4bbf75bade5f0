package dev.fencing.agent.instrumentation.jdbc;

import dev.fencing.agent.bootstrap.ReentryGuard;
import dev.fencing.agent.instrumentation.api.JdbcPooler;
import dev.fencing.agent.instrumentation.api.WeakIdentityCache;
import dev.fencing.agent.log.AgentLog;
import dev.fencing.agent.instrumentation.api.DestinationInventory;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The {@link JdbcSession} of each physical connection, made when the hook first meets it: whether its database is
 * exempt ({@code fencing.exempt.jdbc}), fenced as a whole ({@code fencing.fenced.jdbc}) or has fenced tables (read
 * once per URL from its catalogs), whether a transaction pooler may sit in front of it ({@code fencing.jdbc.pooler}),
 * its schema, and the bound on its idle time in a transaction.
 */
final class JdbcSessions {
  /** Fence detection results kept per JDBC URL, at most. */
  static final int MAX_REMEMBERED_URLS = 256;

  /** The JDBC hook's log: its lines keep the hook's name. */
  private static final AgentLog LOG = AgentLog.get(JdbcFencing.class);

  private final WeakIdentityCache<Object, JdbcSession> sessions = new WeakIdentityCache<>();
  private final ConcurrentHashMap<String, DatabaseFences> fencesByUrl = new ConcurrentHashMap<>();
  private final ConcurrentHashMap<String, Boolean> pooledByUrl = new ConcurrentHashMap<>();
  private final List<String> fencedUrlPrefixes;
  private final JdbcPooler pooler;
  /** Milliseconds, or -1: leave the database's setting. */
  private final long idleTimeoutMillis;
  /** fencing.exempt.jdbc: URL prefixes of databases whose statements are never a lock-protected side effect. */
  private final List<String> exemptUrlPrefixes;
  /** Where each session's database is noted (set once, before any statement). */
  DestinationInventory inventory = new DestinationInventory();

  JdbcSessions(List<String> fencedUrlPrefixes, JdbcPooler pooler, long idleTimeoutMillis,
      List<String> exemptUrlPrefixes) {
    this.fencedUrlPrefixes = fencedUrlPrefixes;
    this.pooler = pooler;
    this.idleTimeoutMillis = idleTimeoutMillis;
    this.exemptUrlPrefixes = exemptUrlPrefixes;
  }

  /** The driver's own connection behind any pool proxies, so the session pair is cached per database session. */
  static Connection physical(Connection c) throws SQLException {
    Connection current = c;
    for (int i = 0; i < 4; i++) {
      Connection inner = current.isWrapperFor(Connection.class) ? current.unwrap(Connection.class) : current;
      if (inner == null || inner == current) {
        return current;
      }
      current = inner;
    }
    return current;
  }

  /** The session of {@code physical} if the hook has met it; else null. */
  JdbcSession get(Connection physical) {
    return sessions.get(physical);
  }

  /**
   * The session of {@code physical}, made (catalog and session queries on it) when first met. One per connection:
   * of two threads meeting it at once, both get the session made first.
   */
  JdbcSession of(Connection physical) throws SQLException {
    JdbcSession s = sessions.get(physical);
    return s != null ? s : make(physical); // small: the hook's hot path inlines it, making is apart
  }

  /** As {@link #of(Connection)}, looking it up with the hook thread's probe ({@link ReentryGuard#enterThread()}). */
  JdbcSession of(Connection physical, ReentryGuard.IdentityProbe probe) throws SQLException {
    JdbcSession s = sessions.get(physical, probe);
    return s != null ? s : make(physical);
  }

  private JdbcSession make(Connection physical) throws SQLException {
    String url = physical.getMetaData().getURL();
    SessionDialect dialect = SessionDialect.of(url);
    if (exempt(url)) {
      // No catalog query, no session setting: the agent leaves this database alone.
      JdbcSession s = new JdbcSession(dialect, DatabaseFences.NONE, false, null, true);
      s.database = inventory.database(url, physical.getClass());
      return remember(physical, s);
    }
    DatabaseFences fences = fences(url, physical, dialect);
    boolean perTransaction = dialect == SessionDialect.POSTGRESQL && pooled(url, physical);
    String schema = fences.tableCount() > 0 ? JdbcSession.currentSchema(physical, dialect) : null;
    if (fences.anyFence() && idleTimeoutMillis > 0) {
      try {
        dialect.boundIdleTransactions(physical, idleTimeoutMillis);
      } catch (SQLException e) {
        LOG.debug("cannot bound idle transactions on " + url + ": " + AgentLog.describe(e));
      }
    }
    JdbcSession s = new JdbcSession(dialect, fences, perTransaction, schema);
    s.database = inventory.database(url, physical.getClass());
    return remember(physical, s);
  }

  private JdbcSession remember(Connection physical, JdbcSession made) {
    made.connection = new java.lang.ref.WeakReference<>(physical);
    return sessions.computeIfAbsent(physical, c -> made);
  }

  /** Whether the URL starts with one of fencing.exempt.jdbc's prefixes. */
  boolean exempt(String url) {
    if (url == null) {
      return false;
    }
    for (String prefix : exemptUrlPrefixes) {
      if (url.startsWith(prefix)) {
        return true;
      }
    }
    return false;
  }

  /** Configured as fenced as a whole (fencing.fenced.jdbc), or read once per URL from the database's catalogs. */
  private DatabaseFences fences(String url, Connection physical, SessionDialect dialect) {
    for (String prefix : fencedUrlPrefixes) {
      if (url != null && url.startsWith(prefix)) {
        return DatabaseFences.declared(dialect);
      }
    }
    if (url == null || dialect == SessionDialect.UNKNOWN) {
      return DatabaseFences.NONE;
    }
    DatabaseFences known = fencesByUrl.get(url);
    if (known != null) {
      return known;
    }
    DatabaseFences detected = DatabaseFences.detect(physical, dialect, url);
    if (fencesByUrl.size() < MAX_REMEMBERED_URLS) {
      fencesByUrl.put(url, detected); // bounded: an application making up URLs (per-tenant, per-test) costs one query per new session, not memory
    }
    LOG.info("JDBC destination " + url + ": fenced tables: " + detected.describe());
    return detected;
  }

  /**
   * fencing.jdbc.pooler: transaction or session as configured. auto: per connection unless the connection is proven
   * direct, once per URL: the server process that runs its statements ({@code pg_backend_pid()}) is the one the driver
   * was told of when it connected (the BackendKeyData, pgjdbc's {@code getBackendPID()}). A pooler hands its clients
   * a key of its own (PgBouncer, over TCP or its Unix socket, on whatever port), so its clients get the
   * per-transaction pair; so does a connection that cannot be proven direct (the probe failed, a driver without
   * {@code getBackendPID}): correct everywhere, only dearer.
   */
  private boolean pooled(String url, Connection physical) {
    if (pooler != JdbcPooler.AUTO) {
      return pooler == JdbcPooler.TRANSACTION;
    }
    Boolean known = pooledByUrl.get(url);
    if (known != null) {
      return known;
    }
    String why;
    boolean pooled = true;
    try (Statement st = physical.createStatement(); ResultSet rs = st.executeQuery("SELECT pg_backend_pid()")) {
      int told = driverBackendPid(physical);
      int runs = rs.next() ? rs.getInt(1) : -1;
      pooled = told != runs;
      why = "the driver was told of server process " + told + " when it connected, and process " + runs
          + " runs its statements";
    } catch (ReflectiveOperationException | SQLException | RuntimeException e) {
      why = "cannot compare the server process the driver was told of with the one that runs its statements ("
          + AgentLog.describe(e) + ")";
    }
    if (pooledByUrl.size() < MAX_REMEMBERED_URLS) {
      pooledByUrl.put(url, pooled);
    }
    if (pooled) {
      LOG.info("JDBC destination " + url + ": " + why + ": not proven direct (a pooler may sit between), so the"
          + " token is set per transaction (fencing.jdbc.pooler=session keeps it per connection)");
    }
    return pooled;
  }

  /** pgjdbc's {@code PGConnection.getBackendPID()} of {@code physical}: the process of its start-up BackendKeyData. */
  private static int driverBackendPid(Connection physical) throws ReflectiveOperationException {
    return (Integer) physical.getClass().getMethod("getBackendPID").invoke(physical);
  }
}
