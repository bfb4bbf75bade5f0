package dev.fencing.fence.sql;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SqlFenceCliTest {

  private final ByteArrayOutputStream buffer = new ByteArrayOutputStream();
  private final PrintStream out = new PrintStream(buffer, true, StandardCharsets.UTF_8);

  private int run(String... args) {
    return SqlFenceCli.run(args, out);
  }

  private String output() {
    return buffer.toString(StandardCharsets.UTF_8);
  }

  @Test
  void printsTheDdlOfEachDialect() {
    assertThat(run("sql", "print", "--dialect", "postgresql", "--table", "orders", "--lock", "ledger")).isZero();
    assertThat(output()).contains("CREATE OR REPLACE FUNCTION fencing_check()").contains("\"orders\"");
    buffer.reset();
    assertThat(run("print", "--dialect=mysql", "--table=shop.orders", "--lock=ledger", "--per-row")).isZero();
    assertThat(output()).contains("`shop`.`orders`").contains("DELIMITER $$");
    buffer.reset();
    assertThat(run("print", "--dialect", "h2", "--table", "orders", "--lock", "ledger", "--permissive")).isZero();
    assertThat(output()).contains(H2FenceTrigger.class.getName());
  }

  @Test
  void badArgumentsPrintTheUsageAndExit2() {
    assertThat(run()).isEqualTo(2);
    assertThat(output()).contains("usage:");
    for (String[] args : new String[][] {
        {"frobnicate"},
        {"print", "--table", "orders", "--lock", "l"},
        {"print", "--dialect", "oracle", "--table", "orders", "--lock", "l"},
        {"print", "--dialect", "h2", "--table", "orders;drop", "--lock", "l"},
        {"print", "--dialect", "h2", "--table", "orders", "--lock", "l", "--jdbc-url", "jdbc:h2:mem:"},
        {"print", "--dialect", "h2", "--table", "orders", "--lock"},
        {"install", "--table", "orders", "--lock", "l"},
        {"uninstall", "--jdbc-url", "jdbc:h2:mem:x", "--table", "orders", "--per-row"},
        {"install", "--jdbc-url", "jdbc:h2:mem:x", "--table", "orders", "--lock", "l", "--password-file", "f"},
    }) {
      buffer.reset();
      assertThat(run(args)).as(String.join(" ", args)).isEqualTo(2);
      assertThat(output()).as(String.join(" ", args)).contains("usage:");
    }
    buffer.reset();
    assertThat(run("--help")).isZero();
  }

  @Test
  void installsAndUninstallsOverJdbc(@TempDir Path dir) throws Exception {
    String url = "jdbc:h2:mem:cli-test;DB_CLOSE_DELAY=-1";
    Path password = dir.resolve("password");
    Files.writeString(password, "secret\n");
    try (Connection c = DriverManager.getConnection(url, "admin", "secret"); Statement st = c.createStatement()) {
      st.execute("CREATE TABLE orders (id INT PRIMARY KEY)");
      assertThat(run("install", "--jdbc-url", url, "--user", "admin", "--password-file", password.toString(),
          "--table", "orders", "--lock", "ledger")).as(output()).isZero();
      assertThat(output()).contains("installed: SQL fence on PUBLIC.ORDERS for lock 'ledger'");
      assertThat(SqlFenceInstaller.isFenced(c)).isTrue();
      buffer.reset();
      assertThat(run("install", "--jdbc-url", url, "--user", "admin", "--password-file", password.toString(),
          "--table", "missing", "--lock", "ledger")).isEqualTo(1);
      assertThat(output()).contains("table missing not found");
      buffer.reset();
      assertThat(run("uninstall", "--jdbc-url", url, "--user", "admin", "--password-file", password.toString(),
          "--table", "orders", "--lock", "ledger")).as(output()).isZero();
      assertThat(output()).contains("removed:");
      assertThat(SqlFenceInstaller.isFenced(c)).isFalse();
    }
  }

  @Test
  void unreachableDatabasesAndUnknownDriversExit1() {
    assertThat(run("install", "--jdbc-url", "jdbc:nosuchdb://x", "--table", "t", "--lock", "l")).isEqualTo(1);
    assertThat(output()).contains("--driver-jar");
  }
}
