package dev.fencing.agent.instrumentation.jdbc;

import dev.fencing.agent.bootstrap.Decision;
import dev.fencing.agent.bootstrap.LockScope;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Arrays;
import dev.fencing.agent.instrumentation.api.DestinationInventory;
import java.util.Objects;

/**
 * What the agent knows about one physical connection: its dialect and fences, the pair it carries, the schema its
 * unqualified names resolve in, and its open transaction (the scope it carries, its unjudged writes).
 */
final class JdbcSession {
  /** No token equals it: the next tagged write sets the pair again, the next untagged one clears it. */
  static final long UNKNOWN_TOKEN = -1;

  private static final LockScope[] NO_SCOPES = new LockScope[0];
  private static final Decision[] NO_DECISIONS = new Decision[0];

  final SessionDialect dialect;
  final DatabaseFences fences;
  /** The pair is set per transaction (a transaction pooler), not per session. */
  final boolean perTransaction;
  /**
   * Schema (or database) unqualified names resolve in, read when the session is met and again after a statement or
   * call that may switch it ({@link #schemaStale}); null when no table is fenced.
   */
  volatile String schema;
  /** setSchema/setCatalog, SET search_path, USE, or a rollback that may undo one ran: read the schema again. */
  volatile boolean schemaStale;
  /** The lock last set (per session, or in the open transaction); null while it carries no pair. */
  volatile String carriedLock;
  /** The token last set; {@link #UNKNOWN_TOKEN} after a failure or rollback may have undone it. */
  volatile long carriedToken;
  volatile String carriedSignature;
  volatile String carriedGrant;
  /**
   * The open transaction wrote where no fence judges, decided outside every lock scope: its commit is a side effect
   * of its own, judged by the thread's gate.
   */
  volatile boolean unjudged;
  /**
   * The lock scope the open transaction carries: the one current when it began or when one of its statements ran,
   * or the one its thread entered while it was open. Its statements made outside every scope are decided by it.
   */
  volatile LockScope txScope;
  /** The thread that opened the transaction (setAutoCommit(false)), until it ends. */
  volatile Thread openedBy;
  /**
   * Unjudged writes of the open transaction made in a lock scope: the scope and the decision of each (distinct
   * pairs), judged again at the commit by that scope's gate and grant. Used by the connection's one thread at a time.
   */
  private LockScope[] scopedUnjudged = NO_SCOPES;
  private Decision[] scopedDecisions = NO_DECISIONS;
  private int scopedCount;
  /** A database of fencing.exempt.jdbc: nothing on this session is a lock-protected side effect. */
  final boolean exempt;
  /** The physical connection (weakly: the agent never keeps a connection alive); set when the session is made. */
  java.lang.ref.WeakReference<Connection> connection;
  /** The session's database in the destination inventory (set when the session is made). */
  DestinationInventory.Database database;
  /** The (table, lock) of the session's last write, to which a fence's refusal of it is attributed. */
  DestinationInventory.PerLock lastWrite;
  /**
   * The distinct (table, lock) entries written since the transaction began (or since the last one ended), to which a
   * blocked commit is attributed; at most {@link #MAX_TX_WRITES}. Used by the connection's one thread at a time.
   */
  private DestinationInventory.PerLock[] txWrites = NO_WRITES;
  private int txWriteCount;
  static final int MAX_TX_WRITES = 16;
  private static final DestinationInventory.PerLock[] NO_WRITES = new DestinationInventory.PerLock[0];

  JdbcSession(SessionDialect dialect, DatabaseFences fences, boolean perTransaction, String schema) {
    this(dialect, fences, perTransaction, schema, false);
  }

  JdbcSession(SessionDialect dialect, DatabaseFences fences, boolean perTransaction, String schema,
      boolean exempt) {
    this.exempt = exempt;
    this.dialect = dialect;
    this.fences = fences;
    this.perTransaction = perTransaction;
    this.schema = schema;
  }

  /** Whether this is the session of {@code physical}. */
  boolean isOf(Connection physical) {
    java.lang.ref.WeakReference<Connection> c = connection;
    return c != null && c.get() == physical;
  }

  boolean carries(Decision d) {
    return carriedToken == d.token() && d.lock().equals(carriedLock)
        && Objects.equals(carriedSignature, d.signature()) && Objects.equals(carriedGrant, d.grant());
  }

  void carry(Decision d) {
    carriedLock = d.lock();
    carriedToken = d.token();
    carriedSignature = d.signature();
    carriedGrant = d.grant();
  }

  void carryNothing() {
    carriedLock = null;
    carriedToken = 0;
    carriedSignature = null;
    carriedGrant = null;
  }

  /** A write of the open transaction went to {@code p} (null: beyond the inventory's cap). */
  void wrote(DestinationInventory.PerLock p) {
    lastWrite = p;
    if (p == null) {
      return;
    }
    int n = txWriteCount;
    if (n > 0 && txWrites[n - 1] == p) {
      return; // the steady state: the same table again
    }
    for (int i = 0; i < n; i++) {
      if (txWrites[i] == p) {
        return;
      }
    }
    if (n == MAX_TX_WRITES) {
      return;
    }
    if (n == txWrites.length) {
      txWrites = Arrays.copyOf(txWrites, Math.min(MAX_TX_WRITES, Math.max(4, n * 2))); // once per connection
    }
    txWrites[n] = p;
    txWriteCount = n + 1;
  }

  /** The agent blocked the open transaction's commit: each table it wrote counts it. */
  void commitBlocked() {
    for (int i = 0; i < txWriteCount; i++) {
      txWrites[i].commitBlocked();
    }
  }

  /** An unjudged write made in {@code scope} under {@code d}, unless one with the same pair is known already. */
  void unjudgedIn(LockScope scope, Decision d) {
    for (int i = 0; i < scopedCount; i++) {
      if (scopedUnjudged[i] == scope && scopedDecisions[i] == d) {
        return;
      }
    }
    if (scopedCount == scopedUnjudged.length) {
      int n = Math.max(2, scopedCount * 2); // once per connection, and again only for a transaction of many scopes
      scopedUnjudged = Arrays.copyOf(scopedUnjudged, n);
      scopedDecisions = Arrays.copyOf(scopedDecisions, n);
    }
    scopedUnjudged[scopedCount] = scope;
    scopedDecisions[scopedCount] = d;
    scopedCount++;
  }

  boolean anyUnjudged() {
    return unjudged || scopedCount > 0;
  }

  /** How many distinct (scope, decision) pairs of unjudged writes the open transaction made in lock scopes. */
  int scopedCount() {
    return scopedCount;
  }

  /** The lock scope of the {@code i}-th of them. */
  LockScope scopeOfUnjudged(int i) {
    return scopedUnjudged[i];
  }

  /** The decision the {@code i}-th of them was made under. */
  Decision decisionOfUnjudged(int i) {
    return scopedDecisions[i];
  }

  /** The transaction ended (commit, rollback): what it carried or wrote is over. */
  void endTransaction() {
    unjudged = false;
    txScope = null;
    openedBy = null;
    for (int i = 0; i < scopedCount; i++) {
      scopedUnjudged[i] = null;
      scopedDecisions[i] = null;
    }
    scopedCount = 0;
    for (int i = 0; i < txWriteCount; i++) {
      txWrites[i] = null;
    }
    txWriteCount = 0;
    if (perTransaction) {
      carryNothing();
    }
  }

  /** The schema unqualified names resolve in on {@code physical}, as its dialect reads it; null if it cannot. */
  static String currentSchema(Connection physical, SessionDialect dialect) {
    String query = dialect.currentSchemaQuery();
    if (query == null) {
      return null;
    }
    try (Statement st = physical.createStatement(); ResultSet rs = st.executeQuery(query)) {
      return rs.next() ? rs.getString(1) : null;
    } catch (SQLException e) {
      return null; // unqualified names then match no fenced table: their writes count as unjudged
    }
  }
}
