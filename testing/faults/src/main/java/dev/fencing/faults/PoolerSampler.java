package dev.fencing.faults;

import dev.fencing.testing.PgBouncer;
import dev.fencing.testing.PostgresServer;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * What a run with the pooler learns about PgBouncer: the most client and server connections it had to database
 * postgres and the backend pids of its server connections (SHOW SERVERS' remote_pid), sampled in the background and
 * after each trial, and at the end the {@link FaultRun.PoolerReport}. A failed sample or read is a note of the run.
 */
final class PoolerSampler {
  private final PgBouncer bouncer;
  private final PostgresServer postgres;
  private final Consumer<String> note;
  private int maxServers;
  private int maxClients;
  /** The backend pids of PgBouncer's server connections, as sampled. */
  private final Set<String> bouncerBackends = new TreeSet<>();

  PoolerSampler(PgBouncer bouncer, PostgresServer postgres, Consumer<String> note) {
    this.bouncer = bouncer;
    this.postgres = postgres;
    this.note = note;
  }

  /**
   * Samples PgBouncer's connections every 200 ms while the run lasts, beside the sample after each trial: a server
   * connection can live and end within one trial (PostgreSQL ends the backend of a frozen holder's open transaction
   * after {@code idle_in_transaction_session_timeout}, which the agent sets to the TTL, and PgBouncer opens another),
   * and a backend that wrote rows must still be known as one of PgBouncer's. A failed background sample is not
   * noted (the admin console may be briefly busy); the per-trial samples note theirs. Closing the result stops it.
   */
  AutoCloseable start() {
    ScheduledExecutorService sampler = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "faults-pgbouncer-sampler");
      t.setDaemon(true);
      return t;
    });
    sampler.scheduleWithFixedDelay(() -> sample(false), 200, 200, TimeUnit.MILLISECONDS);
    return new AutoCloseable() {
      @Override
      public void close() throws InterruptedException {
        sampler.shutdownNow();
        sampler.awaitTermination(5, TimeUnit.SECONDS);
      }

      @Override
      public String toString() {
        return "the PgBouncer sampler";
      }
    };
  }

  /** The most client and server connections PgBouncer had to database postgres, and its server backends' pids. */
  void sample() {
    sample(true);
  }

  private synchronized void sample(boolean noteFailure) {
    try {
      List<Map<String, String>> servers = bouncer.show("SHOW SERVERS").stream()
          .filter(row -> "postgres".equals(row.get("database"))).toList();
      maxServers = Math.max(maxServers, servers.size());
      servers.forEach(row -> bouncerBackends.add(row.get("remote_pid")));
      maxClients = Math.max(maxClients, countRows("SHOW CLIENTS"));
    } catch (RuntimeException e) {
      if (noteFailure) {
        note.accept("cannot sample PgBouncer's connections: " + e.getMessage());
      }
    }
  }

  private int countRows(String show) {
    return (int) bouncer.show(show).stream().filter(row -> "postgres".equals(row.get("database"))).count();
  }

  /** PgBouncer's counters, the samples, and which backends wrote the pg rows of which workers. */
  FaultRun.PoolerReport report() {
    long transactions = 0;
    long queries = 0;
    try {
      for (Map<String, String> row : bouncer.show("SHOW STATS")) {
        if ("postgres".equals(row.get("database"))) {
          transactions += Long.parseLong(row.get("total_xact_count"));
          queries += Long.parseLong(row.get("total_query_count"));
        }
      }
    } catch (RuntimeException e) {
      note.accept("cannot read PgBouncer's counters: " + e.getMessage());
    }
    long backends = 0;
    long shared = 0;
    int most = 0;
    long viaPooler = 0;
    try (Connection c = DriverManager.getConnection(postgres.jdbcUrl()); Statement s = c.createStatement();
        ResultSet r = s.executeQuery("SELECT count(*), count(*) FILTER (WHERE n > 1), coalesce(max(n), 0) FROM"
            + " (SELECT backend, count(DISTINCT worker) AS n FROM pg_write_all GROUP BY backend) b")) {
      if (r.next()) {
        backends = r.getLong(1);
        shared = r.getLong(2);
        most = r.getInt(3);
      }
    } catch (SQLException e) {
      note.accept("cannot read pg_write's backends: " + e.getMessage());
    }
    try (Connection c = DriverManager.getConnection(postgres.jdbcUrl()); Statement s = c.createStatement();
        ResultSet r = s.executeQuery("SELECT DISTINCT backend FROM pg_write_all")) {
      while (r.next()) {
        String backend = Integer.toString(r.getInt(1));
        synchronized (this) {
          viaPooler += bouncerBackends.contains(backend) ? 1 : 0;
        }
      }
    } catch (SQLException e) {
      note.accept("cannot read pg_write's backends: " + e.getMessage());
    }
    synchronized (this) {
      return new FaultRun.PoolerReport(bouncer.mode(), bouncer.poolSize(), transactions, queries, maxServers,
          maxClients, backends, viaPooler, shared, most);
    }
  }
}
