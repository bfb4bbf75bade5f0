package dev.fencing.fence.sql;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import org.junit.jupiter.api.Test;

/** {@code sql print|install|uninstall --outbox} and {@code --processed-events}: what they print, exit codes, errors. */
class OutboxCliTest {

  private final ByteArrayOutputStream buffer = new ByteArrayOutputStream();
  private final PrintStream out = new PrintStream(buffer, true, StandardCharsets.UTF_8);

  private int run(String... args) {
    buffer.reset();
    return SqlFenceCli.run(args, out);
  }

  private String output() {
    return buffer.toString(StandardCharsets.UTF_8);
  }

  @Test
  void printsTheOutboxOfEachDialect() {
    assertThat(run("sql", "print", "--dialect", "postgresql", "--outbox", "outbox", "--lock", "ledger")).isZero();
    assertThat(output()).contains("CREATE TABLE IF NOT EXISTS \"outbox\" (")
        .contains("CREATE TABLE IF NOT EXISTS \"outbox_key\" (")
        .contains("EXECUTE FUNCTION fencing_check('ledger', 'strict')")
        .contains("fencing_outbox_notify('outbox')");
    assertThat(run("print", "--dialect=mysql", "--outbox=shop.outbox", "--lock=ledger")).isZero();
    assertThat(output()).contains("`shop`.`outbox`").contains("DELIMITER $$")
        .contains("CALL `shop`.fencing_check_v3('ledger', FALSE, 'shop.outbox')");
    assertThat(run("print", "--dialect", "h2", "--outbox", "outbox", "--lock", "ledger")).isZero();
    assertThat(output()).contains("\"OUTBOX_KEY\"").contains(H2OutboxTrigger.class.getName());
    assertThat(run("print", "--dialect", "postgresql", "--processed-events", "processed")).isZero();
    assertThat(output()).contains("CREATE TABLE IF NOT EXISTS \"processed\" (");
  }

  @Test
  void usageErrorsExit2NamingWhatIsWrong() {
    // Each case: the arguments, then the message expected after "sql: ".
    String[][] cases = {
        {"print", "--dialect", "h2", "--outbox", "outbox", "--outbox needs --lock"},
        {"print", "--dialect", "h2", "--outbox", "outbox", "--table", "t", "--lock", "l",
            "--table and --outbox exclude each other"},
        {"print", "--dialect", "h2", "--outbox", "o", "--processed-events", "p",
            "--outbox and --processed-events exclude each other"},
        {"print", "--dialect", "h2", "--outbox", "outbox", "--lock", "l", "--per-row",
            "--per-row does not apply here (with --outbox)"},
        {"print", "--dialect", "h2", "--processed-events", "p", "--lock", "l",
            "--lock does not apply here (with --processed-events)"},
        {"uninstall", "--jdbc-url", "jdbc:h2:mem:x", "--outbox", "outbox", "--lock", "l",
            "--lock does not apply here (with --outbox)"},
        {"print", "--dialect", "h2", "--outbox", "out;box", "--lock", "l", "invalid table name 'out;box'"},
        {"print", "--dialect", "h2", "--outbox", "o" + "x".repeat(56), "--lock", "l", "is too long"},
        {"print", "--dialect", "h2", "--outbox", "outbox", "--lock", "bad lock", "invalid lock name 'bad lock'"},
        {"install", "--outbox", "outbox", "--lock", "l", "missing --jdbc-url"},
        {"print", "--dialect", "h2", "--lock", "l", "missing --table (or --outbox, --processed-events)"},
    };
    for (String[] c : cases) {
      String[] args = java.util.Arrays.copyOf(c, c.length - 1);
      String expected = c[c.length - 1];
      assertThat(run(args)).as(String.join(" ", args)).isEqualTo(2);
      assertThat(output()).as(String.join(" ", args)).contains("usage:");
      assertThat(output()).as(String.join(" ", args)).contains(expected.startsWith("--") || expected.startsWith(
          "missing") || expected.startsWith("invalid") ? "sql: " + expected : expected);
    }
  }

  @Test
  void installsAndUninstallsOnH2() throws Exception {
    String url = "jdbc:h2:mem:outbox-cli;DB_CLOSE_DELAY=-1";
    try (Connection keep = DriverManager.getConnection(url)) {
      assertThat(run("install", "--jdbc-url", url, "--outbox", "events", "--lock", "shop")).isZero();
      assertThat(output()).contains("installed: tokened outbox PUBLIC.EVENTS for lock 'shop'")
          .contains("writers need: GRANT INSERT ON PUBLIC.EVENTS")
          .contains("the relay needs: GRANT SELECT, UPDATE (state, attempts, next_attempt_at, delivered_at, "
              + "last_error, claimed_by, claimed_until) ON PUBLIC.EVENTS TO <relay>; DELETE only whoever removes "
              + "events");
      assertThat(run("install", "--jdbc-url", url, "--outbox", "events", "--lock", "shop")).isZero();
      assertThat(output()).startsWith("already installed: tokened outbox PUBLIC.EVENTS");
      try (Statement st = keep.createStatement()) {
        st.execute("SET @fencing_lock = 'shop'");
        st.execute("SET @fencing_token = 4");
        st.execute("INSERT INTO events (channel, target, payload) VALUES ('kafka', 'orders', 'x')");
      }
      assertThat(run("uninstall", "--jdbc-url", url, "--outbox", "events")).isEqualTo(1);
      assertThat(output()).contains("sql uninstall failed: cannot remove the outbox PUBLIC.EVENTS: it holds 1 "
          + "pending event");
      try (Statement st = keep.createStatement()) {
        st.execute("DELETE FROM events");
      }
      assertThat(run("uninstall", "--jdbc-url", url, "--outbox", "events")).isZero();
      assertThat(output()).contains("removed: tokened outbox PUBLIC.EVENTS and PUBLIC.EVENTS_KEY")
          .contains("no fenced table left in the schema");
      try (ResultSet rs = keep.getMetaData().getTables(null, "PUBLIC", "EVENTS%", null)) {
        assertThat(rs.next()).isFalse();
      }
      assertThat(run("install", "--jdbc-url", url, "--processed-events", "seen")).isZero();
      assertThat(output()).contains("installed: processed-events table PUBLIC.SEEN");
      assertThat(run("uninstall", "--jdbc-url", url, "--processed-events", "seen")).isZero();
      assertThat(run("uninstall", "--jdbc-url", url, "--outbox", "seen")).isEqualTo(1);
      assertThat(output()).contains("table seen not found");
    }
  }
}
