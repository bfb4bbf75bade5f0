package dev.fencing.agent.instrumentation.jdbc;

import dev.fencing.agent.bootstrap.JdbcHook;
import dev.fencing.agent.policy.BenchGates;
import dev.fencing.agent.instrumentation.api.RejectionCounters;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * What the statement advice calls around each execute: beforeExecute (classify, find the physical connection and
 * its session state, ask the policy, check the session already carries the pair) and afterExecute. The statements
 * are real in-memory H2 objects that are never executed here, so only the hook's own work is measured; the session
 * pair is set once (first call) and then found current, as in the steady state.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class JdbcHookBenchmark {
  private static final String URL = "jdbc:h2:mem:bench;DB_CLOSE_DELAY=-1";
  private static final String UPDATE = "UPDATE accounts SET balance = balance - 10 WHERE id = 7";

  /** noop: the hook installed before the agent core loads; unfenced/fenced: the real hook, destination (not) fenced. */
  @Param({"noop", "unfenced", "fenced"})
  public String hook;

  private JdbcHook h;
  private Connection connection;
  private Statement statement;
  private PreparedStatement prepared;
  private String sql = UPDATE;

  @Setup
  public void setUp() throws Exception {
    connection = DriverManager.getConnection(URL);
    try (Statement st = connection.createStatement()) {
      st.execute("CREATE TABLE IF NOT EXISTS accounts(id INT PRIMARY KEY, balance INT)");
    }
    statement = connection.createStatement();
    prepared = connection.prepareStatement("UPDATE accounts SET balance = balance - ? WHERE id = ?");
    if ("noop".equals(hook)) {
      h = JdbcHook.NOOP;
    } else {
      BenchGates.install("agent");
      h = new JdbcFencing("fenced".equals(hook) ? List.of("jdbc:h2:mem:bench") : List.of(), new RejectionCounters());
      // Steady state: the first write sets the session pair, later ones find it current.
      once(statement, UPDATE, JdbcHook.SQL);
    }
    h.prepared(prepared, "UPDATE accounts SET balance = balance - ? WHERE id = ?");
  }

  private int once(Object st, String text, int kind) throws Exception {
    int entered = h.beforeExecute(st, text, kind);
    h.afterExecute(st, entered, null);
    return entered;
  }

  @TearDown
  public void tearDown() throws SQLException {
    connection.close();
  }

  @Benchmark
  public int statementUpdate() throws Exception {
    return once(statement, sql, JdbcHook.SQL);
  }

  @Benchmark
  public int preparedUpdate() throws Exception {
    return once(prepared, null, JdbcHook.PREPARED);
  }
}
