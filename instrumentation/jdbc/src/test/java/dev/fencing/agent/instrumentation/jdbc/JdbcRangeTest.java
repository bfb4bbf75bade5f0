package dev.fencing.agent.instrumentation.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.instrumentation.LibraryCheck;
import java.io.IOException;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The JDBC hook against the real jars of the oldest and the latest driver of each database the project tests (pgjdbc
 * 42.2.28 and 42.7.14, MariaDB Connector/J 2.7.12 and 4.0.0, H2 2.3.232 and 2.5.252, as testing/library-versions
 * resolves them): the driver's statement and connection classes are selected, every method the hook relies on
 * (execute*(String), execute*(), executeBatch, prepareStatement/prepareCall, commit, rollback, setAutoCommit) is found
 * in them, and all the advice weaves. The hook names no driver class but pgjdbc's CopyManager (COPY FROM STDIN),
 * which is checked too. A driver release that moves these methods out of the classes it hands to the application
 * fails here.
 */
class JdbcRangeTest {
  private static Map<String, Integer> advised(String driver, String end) throws IOException {
    return LibraryCheck.advised(new JdbcInstrumentationModule(), LibraryCheck.versionJars(driver, end));
  }

  /**
   * driver, end, its Statement class (execute/executeUpdate/executeQuery/executeLargeUpdate with and without SQL,
   * executeBatch/executeLargeBatch: at least 9 methods), its PreparedStatement class (overriding the no-SQL forms),
   * its Connection class (prepareStatement/prepareCall overloads, commit, rollback both forms, setAutoCommit: at least
   * 9).
   */
  @ParameterizedTest
  @CsvSource({
      "postgresql, oldest, org.postgresql.jdbc.PgStatement, org.postgresql.jdbc.PgPreparedStatement, org.postgresql.jdbc.PgConnection",
      "postgresql, latest, org.postgresql.jdbc.PgStatement, org.postgresql.jdbc.PgPreparedStatement, org.postgresql.jdbc.PgConnection",
      "mariadb, oldest, org.mariadb.jdbc.MariaDbStatement, org.mariadb.jdbc.ClientSidePreparedStatement, org.mariadb.jdbc.MariaDbConnection",
      "mariadb, latest, org.mariadb.jdbc.Statement, org.mariadb.jdbc.ClientPreparedStatement, org.mariadb.jdbc.Connection",
      "h2, oldest, org.h2.jdbc.JdbcStatement, org.h2.jdbc.JdbcPreparedStatement, org.h2.jdbc.JdbcConnection",
      "h2, latest, org.h2.jdbc.JdbcStatement, org.h2.jdbc.JdbcPreparedStatement, org.h2.jdbc.JdbcConnection"})
  void theDriversStatementAndConnectionClassesAreHookedAndTheAdviceWeaves(String driver, String end, String statement,
      String prepared, String connection) throws IOException {
    Map<String, Integer> advised = advised(driver, end);
    assertThat(advised.get(statement)).as(statement + " in " + advised).isGreaterThanOrEqualTo(9);
    assertThat(advised.get(prepared)).as(prepared + " in " + advised).isGreaterThanOrEqualTo(3);
    assertThat(advised.get(connection)).as(connection + " in " + advised).isGreaterThanOrEqualTo(9);
    if (driver.equals("postgresql")) {
      // the constructor (which connection) and copyIn(String, InputStream|Reader, ...) overloads
      assertThat(advised.get("org.postgresql.copy.CopyManager")).as("CopyManager in " + advised)
          .isGreaterThanOrEqualTo(3);
    }
  }
}
