package dev.fencing.fence.sql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

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
        .contains("SIGNAL SQLSTATE 'FN002'").contains("CALL fencing_check_v2('ledger', FALSE, 'orders')")
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
}
