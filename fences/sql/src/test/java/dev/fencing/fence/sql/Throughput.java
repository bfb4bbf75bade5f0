package dev.fencing.fence.sql;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * Side-by-side throughput of one and four connections writing with the same token: the current holder's writers
 * must not serialise on the fence.
 *
 * <p>Two workloads. Autocommit single-row UPDATEs are the fence's worst case (its cost is per statement), but on a
 * 2-core machine that also runs the client they are CPU-bound: even the unfenced table scales only as far as the
 * spare core allows, so their figures are printed, not asserted. The asserted workload is a transaction with
 * application work in it (UPDATE, 1 ms, UPDATE, COMMIT): a fence that serialised same-token transactions would hold
 * it at 1x, which the control (a trigger taking one exclusive lock per write, like a naive {@code SELECT ... FOR
 * UPDATE} fence) shows.
 */
final class Throughput {

  static final int ROWS = 1000;
  static final long MEASURE_MILLIS = Long.getLong("fencing.it.throughput.millis", 2500);

  interface Connector {
    Connection connect() throws SQLException;
  }

  interface Session {
    void apply(Connection c) throws SQLException;
  }

  private enum Workload { AUTOCOMMIT_UPDATE, TRANSACTION_WITH_WORK }

  private Throughput() {
  }

  /** Creates {@code tables} with {@value #ROWS} rows each. */
  static void prepare(Connection c, String... tables) throws SQLException {
    for (String table : tables) {
      try (Statement st = c.createStatement()) {
        st.execute("CREATE TABLE " + table + " (id INT PRIMARY KEY, amount INT NOT NULL)");
      }
      try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + table + " (id, amount) VALUES (?, 0)")) {
        for (int id = 0; id < ROWS; id++) {
          ps.setInt(1, id);
          ps.addBatch();
        }
        ps.executeBatch();
      }
    }
  }

  static void assertScales(String database, Connector connector, Session session, String fenced, String unfenced,
      String control) throws Exception {
    Session none = c -> { };
    run(connector, session, fenced, 4, 1000, Workload.AUTOCOMMIT_UPDATE); // warm-up: JIT, plan caches
    double fenced1 = run(connector, session, fenced, 1, MEASURE_MILLIS, Workload.AUTOCOMMIT_UPDATE);
    double fenced4 = run(connector, session, fenced, 4, MEASURE_MILLIS, Workload.AUTOCOMMIT_UPDATE);
    double plain1 = run(connector, none, unfenced, 1, MEASURE_MILLIS, Workload.AUTOCOMMIT_UPDATE);
    double plain4 = run(connector, none, unfenced, 4, MEASURE_MILLIS, Workload.AUTOCOMMIT_UPDATE);
    double tx1 = run(connector, session, fenced, 1, MEASURE_MILLIS, Workload.TRANSACTION_WITH_WORK);
    double tx4 = run(connector, session, fenced, 4, MEASURE_MILLIS, Workload.TRANSACTION_WITH_WORK);
    double serial1 = run(connector, none, control, 1, MEASURE_MILLIS, Workload.TRANSACTION_WITH_WORK);
    double serial4 = run(connector, none, control, 4, MEASURE_MILLIS, Workload.TRANSACTION_WITH_WORK);
    String report = String.format(Locale.ROOT, "%s, %d ms per run, 1 vs 4 connections with the same token:%n"
        + "  autocommit UPDATE   fenced %6.0f/s -> %6.0f/s (%.2fx)   unfenced %6.0f/s -> %6.0f/s (%.2fx)"
        + "   fence cost %.0f%%%n"
        + "  tx UPDATE,1ms,UPDATE fenced %6.0f/s -> %6.0f/s (%.2fx)   serialising control %6.0f/s -> %6.0f/s (%.2fx)",
        database, MEASURE_MILLIS, fenced1, fenced4, fenced4 / fenced1, plain1, plain4, plain4 / plain1,
        100 * (1 - fenced1 / plain1), tx1, tx4, tx4 / tx1, serial1, serial4, serial4 / serial1);
    System.out.println("[throughput] " + report);
    assertThat(serial4 / serial1).as("the control must show serialisation, or the measurement proves nothing: "
        + report).isLessThan(1.5);
    assertThat(tx4).as(report).isGreaterThanOrEqualTo(1.5 * tx1);
  }

  /** Transactions (or statements) per second of {@code threads} connections, each its own, for {@code millis}. */
  private static double run(Connector connector, Session session, String table, int threads, long millis,
      Workload workload) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    List<Connection> connections = new ArrayList<>();
    try {
      for (int i = 0; i < threads; i++) {
        Connection c = connector.connect();
        connections.add(c);
        session.apply(c);
        c.setAutoCommit(workload == Workload.AUTOCOMMIT_UPDATE);
      }
      long start = System.nanoTime();
      long deadline = start + TimeUnit.MILLISECONDS.toNanos(millis);
      List<Future<Long>> results = new ArrayList<>();
      int slice = ROWS / threads;
      for (int t = 0; t < threads; t++) {
        Connection c = connections.get(t);
        int base = t * slice;
        results.add(pool.submit(() -> {
          long count = 0;
          ThreadLocalRandom random = ThreadLocalRandom.current();
          try (PreparedStatement ps = c.prepareStatement("UPDATE " + table + " SET amount = amount + 1 WHERE id = ?")) {
            while (System.nanoTime() < deadline) {
              // Each connection writes its own rows: the only thing writers could wait for is the fence (or the
              // control's lock, which MariaDB takes after the row lock: shared rows would deadlock there).
              ps.setInt(1, base + random.nextInt(slice));
              ps.executeUpdate();
              if (workload == Workload.TRANSACTION_WITH_WORK) {
                Thread.sleep(1);
                ps.setInt(1, base + random.nextInt(slice));
                ps.executeUpdate();
                c.commit();
              }
              count++;
            }
          }
          return count;
        }));
      }
      long total = 0;
      for (Future<Long> f : results) {
        total += f.get(millis + 60_000, TimeUnit.MILLISECONDS);
      }
      return total / ((System.nanoTime() - start) / 1e9);
    } finally {
      pool.shutdownNow();
      for (Connection c : connections) {
        c.close();
      }
    }
  }
}
