package dev.fencing.fence.sql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.fence.store.SqlDialect;
import java.util.List;
import org.junit.jupiter.api.Test;

class SqlFenceDdlTest {

  @Test
  void tableNamesArePlainIdentifiersOptionallyQualified() {
    assertThat(TableName.parse("orders")).isEqualTo(new TableName(null, "orders"));
    assertThat(TableName.parse("billing.Orders_2")).isEqualTo(new TableName("billing", "Orders_2"));
    assertThatThrownBy(() -> TableName.parse("")).hasMessage("missing table name");
    for (String bad : List.of("1orders", "orders;drop", "a.b.c", "\"orders\"", "or ders", "a.", ".a",
        "x".repeat(64))) {
      assertThatThrownBy(() -> TableName.parse(bad)).as(bad).isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("[A-Za-z_][A-Za-z0-9_]*");
    }
  }

  @Test
  void lockNamesFollowTheAgentsRule() {
    TableName t = TableName.parse("orders");
    assertThat(new SqlFence(t, "ledger-1.eu_west", false, false).lock()).isEqualTo("ledger-1.eu_west");
    for (String bad : List.of("", "a'b", "a b", "x".repeat(129), "ä")) {
      assertThatThrownBy(() -> new SqlFence(t, bad, false, false)).as(bad)
          .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("invalid lock name");
    }
  }

  @Test
  void dialectsAreDetectedFromProductNames() {
    assertThat(SqlDialect.fromProductName("PostgreSQL")).contains(SqlDialect.POSTGRESQL);
    assertThat(SqlDialect.fromProductName("MariaDB")).contains(SqlDialect.MYSQL);
    assertThat(SqlDialect.fromProductName("MySQL")).contains(SqlDialect.MYSQL);
    assertThat(SqlDialect.fromProductName("H2")).contains(SqlDialect.H2);
    assertThat(SqlDialect.fromProductName("Oracle")).isEmpty();
    assertThatThrownBy(() -> SqlDialect.fromName("oracle")).hasMessageContaining("postgresql, mysql or h2");
  }

  @Test
  void postgresScriptUsesAdvisoryLocksAndStatementTriggers() {
    String ddl = new SqlFenceDdl(SqlDialect.POSTGRESQL).forPrint(new SqlFence(TableName.parse("Billing.Orders"),
        "ledger", false, false));
    assertThat(ddl)
        .contains("CREATE TABLE IF NOT EXISTS \"billing\".fencing_fence")
        .contains("pg_advisory_xact_lock_shared(")
        .contains("ERRCODE = 'FN001'").contains("ERRCODE = 'FN002'")
        .contains("current_setting('fencing.token', true)")
        .contains("ON \"billing\".\"orders\" FOR EACH STATEMENT EXECUTE FUNCTION \"billing\".fencing_check('ledger', "
            + "'strict')")
        .doesNotContain("fencing_token bigint");
  }

  @Test
  void perRowScriptsAddTheTokenColumn() {
    SqlFence fence = new SqlFence(TableName.parse("orders"), "ledger", true, true);
    assertThat(new SqlFenceDdl(SqlDialect.POSTGRESQL).forPrint(fence))
        .contains("ADD COLUMN fencing_token bigint").contains("fencing_check_row('ledger', 'permissive')");
    assertThat(new SqlFenceDdl(SqlDialect.MYSQL).forPrint(fence))
        .contains("ADD COLUMN fencing_token BIGINT NULL COMMENT").contains("SET NEW.fencing_token = v_token");
    assertThat(new SqlFenceDdl(SqlDialect.H2).forPrint(fence))
        .contains("ALTER TABLE \"ORDERS\" ADD COLUMN fencing_token BIGINT")
        .contains("\"fencing:row-permissive:ledger:ORDERS\"").contains("FOR EACH ROW");
  }

  @Test
  void mysqlScriptIsDelimitedForTheMysqlClient() {
    String ddl = new SqlFenceDdl(SqlDialect.MYSQL).forPrint(new SqlFence(TableName.parse("orders"), "ledger",
        false, false));
    assertThat(ddl).startsWith("DELIMITER $$").endsWith("DELIMITER ;\n")
        .contains("fencing_fence_stripe").contains("CONNECTION_ID() % 16").contains("FOR UPDATE").contains("SIGNAL SQLSTATE 'FN001'")
        .contains("SIGNAL SQLSTATE 'FN002'").contains("CALL fencing_check_v3('ledger', FALSE, 'orders')")
        .contains("@fencing_token").contains("@fencing_lock");
  }

  @Test
  void triggerNamesFitTheDatabasesLimitAndChangeWithTheOptions() {
    String longTable = "t".repeat(63);
    for (SqlDialect d : List.of(SqlDialect.POSTGRESQL, SqlDialect.MYSQL)) {
      SqlFenceDdl ddl = new SqlFenceDdl(d);
      List<String> strict = ddl.triggerNames(new SqlFence(TableName.parse(longTable), "l", false, false));
      List<String> permissive = ddl.triggerNames(new SqlFence(TableName.parse(longTable), "l", false, true));
      assertThat(strict).allSatisfy(n -> assertThat(n).startsWith("fencing_").hasSizeLessThanOrEqualTo(63));
      assertThat(strict).doesNotContainAnyElementsOf(permissive);
    }
  }

  @Test
  void postgresCheckRunsAsItsOwnerWithAPinnedSearchPathAndReadsTheGrant() {
    SqlFenceDdl ddl = new SqlFenceDdl(SqlDialect.POSTGRESQL);
    String qualified = ddl.forPrint(new SqlFence(TableName.parse("billing.orders"), "ledger", false, false));
    assertThat(qualified)
        .contains("SECURITY DEFINER SET search_path = \"billing\", pg_temp")
        .contains("current_setting('fencing.grant', true)")
        .contains("was issued to another grant")
        .contains("ADD COLUMN IF NOT EXISTS grant_id varchar(64)")
        .contains("ADD COLUMN IF NOT EXISTS grant_token bigint")
        .contains("CREATE TABLE IF NOT EXISTS \"billing\".fencing_fenced_table")
        .contains("VALUES ('billing', 'orders', 'ledger', 'table', localtimestamp)")
        .contains("REVOKE ALL ON \"billing\".fencing_fence, \"billing\".fencing_fenced_table FROM PUBLIC")
        .contains("GRANT SELECT ON \"billing\".fencing_fence, \"billing\".fencing_fenced_table TO PUBLIC")
        .contains("REVOKE ALL ON FUNCTION \"billing\".fencing_check() FROM PUBLIC")
        .doesNotContain("DO $fencing$");
    assertThat(ddl.forPrint(new SqlFence(TableName.parse("orders"), "ledger", true, false)))
        .contains("ALTER FUNCTION %I.fencing_check() SECURITY DEFINER SET search_path = %I, pg_temp")
        .contains("VALUES (current_schema(), 'orders', 'ledger', 'row', localtimestamp)");
  }

  @Test
  void mysqlScriptUsesTheV3CheckGrantsToPublicAndRegistersTheTable() {
    SqlFenceDdl ddl = new SqlFenceDdl(SqlDialect.MYSQL);
    String script = ddl.forPrint(new SqlFence(TableName.parse("orders"), "ledger", false, false));
    assertThat(script)
        .contains("CREATE PROCEDURE IF NOT EXISTS fencing_check_v3(").contains("SQL SECURITY DEFINER")
        .contains("@fencing_grant").contains("ADD COLUMN IF NOT EXISTS grant_id")
        .contains("ADD COLUMN IF NOT EXISTS grant_token")
        .doesNotContain("fencing_check_v2(")
        .contains("VALUES (DATABASE(), 'orders', 'ledger', 'table', NOW(6))")
        .contains("-- MariaDB 10.11+").contains("GRANT SELECT ON fencing_fence TO PUBLIC")
        .contains("GRANT SELECT ON fencing_fenced_table TO PUBLIC");
    assertThat(ddl.uninstall(TableName.parse("shop.orders"), List.of(), false, true))
        .extracting(SqlFenceDdl.Statement::sql)
        .contains("DROP PROCEDURE IF EXISTS `shop`.fencing_check_v1", "DROP PROCEDURE IF EXISTS `shop`.fencing_check_v2",
            "DROP PROCEDURE IF EXISTS `shop`.fencing_check_v3",
            "DROP TABLE IF EXISTS `shop`.fencing_fenced_table");
    assertThat(MariaDbFenceDialect.hasPublic("10.11.19-MariaDB-0+deb12u1")).isTrue();
    assertThat(MariaDbFenceDialect.hasPublic("11.4.2-MariaDB")).isTrue();
    assertThat(MariaDbFenceDialect.hasPublic("10.6.18-MariaDB")).isFalse();
    assertThat(MariaDbFenceDialect.hasPublic("8.0.36")).isFalse();
  }

  @Test
  void mysqlTriggerNamesChangeWithTheCheckProcedureSoThatAnUpgradeReplacesThem() {
    // The names of v1 and v2 triggers (fencing_check_v1, fencing_check_v2) for the same fence, as earlier releases
    // hashed them.
    assertThat(new SqlFenceDdl(SqlDialect.MYSQL).triggerNames(new SqlFence(TableName.parse("orders"), "l", false,
        false))).allSatisfy(n -> assertThat(n).startsWith("fencing_orders_b").doesNotEndWith("_" + V1_HASH)
            .doesNotEndWith("_" + V2_HASH));
  }

  /** hash("MYSQL|orders|l|false|false"), the trigger-name hash of the release before grant ids. */
  private static final String V1_HASH = hash("MYSQL|orders|l|false|false");
  /** The trigger-name hash of the release whose triggers called fencing_check_v2. */
  private static final String V2_HASH = hash("MYSQL|orders|l|false|false|fencing_check_v2");

  private static String hash(String text) {
    try {
      byte[] d = java.security.MessageDigest.getInstance("SHA-256")
          .digest(text.getBytes(java.nio.charset.StandardCharsets.UTF_8));
      return String.format("%02x%02x%02x%02x", d[0], d[1], d[2], d[3]);
    } catch (java.security.NoSuchAlgorithmException e) {
      throw new AssertionError(e);
    }
  }
}
