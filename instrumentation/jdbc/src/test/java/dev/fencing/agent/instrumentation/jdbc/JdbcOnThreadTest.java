package dev.fencing.agent.instrumentation.jdbc;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.agent.bootstrap.BlockReason;
import dev.fencing.agent.bootstrap.Decision;
import dev.fencing.agent.bootstrap.Fencing;
import dev.fencing.agent.bootstrap.JdbcHook;
import dev.fencing.agent.instrumentation.LibraryCheck;
import dev.fencing.agent.instrumentation.api.RejectionCounters;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Driver;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * What the hook keeps on a thread between calls (the statement prepared or run last, the session of the connection a
 * plain statement ran on) only ever spares a lookup: a thread moving between connections and statements gets each one
 * decided as its own. Real H2 (the newest tested release), two in-memory databases: one declared fenced, one without
 * fences, and a policy that tags a write a fence judges and blocks any other, so a statement decided with another's
 * session or classification is blocked where it must pass, or passes where it must be blocked.
 */
class JdbcOnThreadTest {
  private static final String FENCED = "jdbc:h2:mem:onthread-fenced;DB_CLOSE_DELAY=-1";
  private static final String PLAIN = "jdbc:h2:mem:onthread-plain;DB_CLOSE_DELAY=-1";
  private static final String UPDATE = "UPDATE t SET v = v + 1 WHERE id = 1";

  private static URLClassLoader h2;
  private static Connection fenced;
  private static Connection plain;
  private JdbcFencing hook = new JdbcFencing(List.of("jdbc:h2:mem:onthread-fenced"), new RejectionCounters());

  @BeforeAll
  static void databases() throws Exception {
    List<Path> jars = LibraryCheck.versionJars("h2", "latest");
    h2 = new URLClassLoader(new URL[] {jars.get(0).toUri().toURL()}, JdbcOnThreadTest.class.getClassLoader());
    Driver driver = (Driver) Class.forName("org.h2.Driver", true, h2).getDeclaredConstructor().newInstance();
    fenced = driver.connect(FENCED, new Properties());
    plain = driver.connect(PLAIN, new Properties());
    for (Connection c : List.of(fenced, plain)) {
      try (Statement st = c.createStatement()) {
        st.execute("CREATE TABLE IF NOT EXISTS t(id INT PRIMARY KEY, v INT)");
      }
    }
    Fencing.install((channel, write, isFenced) -> !write || isFenced ? Decision.tag("onthread", 7)
        : Decision.block("onthread", 7, BlockReason.EXPIRED));
  }

  @AfterAll
  static void close() throws Exception {
    Fencing.install(null);
    fenced.close();
    plain.close();
    h2.close();
  }

  /** The hook's part of one execute; throws the hook's SQLException when it blocks. */
  private void run(Object statement, String sql, int kind) throws Exception {
    int entered = hook.beforeExecute(statement, sql, kind);
    hook.afterExecute(statement, entered, null);
  }

  private void assertBlocked(Object statement, String sql, int kind) {
    assertThatThrownBy(() -> run(statement, sql, kind)).isInstanceOf(SQLException.class)
        .extracting(e -> ((SQLException) e).getSQLState()).isEqualTo(JdbcFencing.BLOCKED_SQLSTATE);
  }

  @Test
  void plainStatementsAlternatingBetweenConnectionsAreEachDecidedByTheirOwnSession() throws Exception {
    try (Statement onFenced = fenced.createStatement(); Statement onPlain = plain.createStatement()) {
      for (int i = 0; i < 3; i++) {
        run(onFenced, UPDATE, JdbcHook.SQL);
        assertBlocked(onPlain, UPDATE, JdbcHook.SQL);
        run(onFenced, UPDATE, JdbcHook.SQL);
        run(onFenced, UPDATE, JdbcHook.SQL);
        assertBlocked(onPlain, UPDATE, JdbcHook.SQL);
        assertBlocked(onPlain, UPDATE, JdbcHook.SQL);
      }
    }
  }

  @Test
  void preparedStatementsAreEachDecidedAsWhatTheyArePreparedLastOrNot() throws Exception {
    try (PreparedStatement write = prepare(plain, UPDATE);
        PreparedStatement read = prepare(plain, "SELECT v FROM t WHERE id = 1");
        PreparedStatement fencedWrite = prepare(fenced, UPDATE)) {
      // read was prepared last: the write, run first, is found by its own lookup
      assertBlocked(write, null, JdbcHook.PREPARED);
      run(read, null, JdbcHook.PREPARED);
      run(fencedWrite, null, JdbcHook.PREPARED);
      assertBlocked(write, null, JdbcHook.PREPARED);
      assertBlocked(write, null, JdbcHook.BATCH);
      run(read, null, JdbcHook.PREPARED);
      run(fencedWrite, null, JdbcHook.BATCH);
      // a plain statement between them changes nothing the prepared ones rely on
      try (Statement onFenced = fenced.createStatement()) {
        run(onFenced, UPDATE, JdbcHook.SQL);
      }
      assertBlocked(write, null, JdbcHook.PREPARED);
    }
  }

  @Test
  void aStatementPreparedOnOneThreadIsDecidedAsItselfOnAnother() throws Exception {
    ExecutorService other = Executors.newSingleThreadExecutor();
    try (PreparedStatement write = prepare(plain, UPDATE);
        PreparedStatement fencedWrite = prepare(fenced, UPDATE)) {
      other.submit(() -> {
        run(fencedWrite, null, JdbcHook.PREPARED);
        assertBlocked(write, null, JdbcHook.PREPARED);
        run(fencedWrite, null, JdbcHook.PREPARED);
        return null;
      }).get();
      assertBlocked(write, null, JdbcHook.PREPARED);
      run(fencedWrite, null, JdbcHook.PREPARED);
    } finally {
      other.shutdownNow();
    }
  }

  /** Two hooks (two agents' worth of state in one JVM's tests) never take each other's kept state. */
  @Test
  void anotherHookOnTheSameThreadDecidesByItsOwnConfiguration() throws Exception {
    JdbcFencing nothingFenced = new JdbcFencing(List.of(), new RejectionCounters());
    try (Statement onFenced = fenced.createStatement()) {
      run(onFenced, UPDATE, JdbcHook.SQL);
      JdbcFencing declaring = hook;
      hook = nothingFenced;
      try {
        assertBlocked(onFenced, UPDATE, JdbcHook.SQL); // this hook was told of no fence on that database
      } finally {
        hook = declaring;
      }
      run(onFenced, UPDATE, JdbcHook.SQL);
    }
  }

  private PreparedStatement prepare(Connection c, String sql) throws SQLException {
    PreparedStatement ps = c.prepareStatement(sql);
    hook.prepared(ps, sql);
    return ps;
  }
}
