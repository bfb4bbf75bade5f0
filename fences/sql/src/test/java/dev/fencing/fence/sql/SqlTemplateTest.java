package dev.fencing.fence.sql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.fence.store.SqlDialect;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class SqlTemplateTest {

  private static final String TEXT = ""
      + "-- Commentary for the reader, never rendered.\n"
      + "\n"
      + "-- @section seed\n"
      + "INSERT INTO ${schema}fencing_fence VALUES (${lock}, 0) -- ${lock} again: ${lock}\n"
      + "-- @end\n"
      + "-- @section body\n"
      + "BEGIN\n"
      + "  ${inner}\n"
      + "  ${optional}\n"
      + "END\n"
      + "-- @end\n";

  private final SqlTemplate template = SqlTemplate.parse("test.sql", TEXT);

  @Test
  void rendersASectionWithItsParametersAndWithoutTheCommentary() {
    assertThat(template.sections()).containsExactly("seed", "body");
    assertThat(template.render("seed", "schema", "\"shop\".", "lock", "'ledger'"))
        .isEqualTo("INSERT INTO \"shop\".fencing_fence VALUES ('ledger', 0) -- 'ledger' again: 'ledger'");
  }

  @Test
  void aParameterAloneOnItsLineIsABlockIndentedLikeIt_emptyRemovesTheLine() {
    assertThat(template.render("body", Map.of("inner", "IF x THEN\n  y;\nEND IF;", "optional", "")))
        .isEqualTo("BEGIN\n  IF x THEN\n    y;\n  END IF;\nEND");
    assertThat(template.render("body", Map.of("inner", "a;", "optional", "b;"))).isEqualTo("BEGIN\n  a;\n  b;\nEND");
  }

  @Test
  void valuesAreInsertedVerbatimAndNotRenderedAgain() {
    assertThat(template.render("seed", "schema", "", "lock", "'${schema}'"))
        .isEqualTo("INSERT INTO fencing_fence VALUES ('${schema}', 0) -- '${schema}' again: '${schema}'");
  }

  @Test
  void unsetUnknownOrRepeatedParametersAndUnknownSectionsFailLoudly() {
    assertThatThrownBy(() -> template.render("seed", "schema", ""))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("SQL template test.sql section 'seed' needs parameter ${lock}, which was not set");
    assertThatThrownBy(() -> template.render("seed", "schema", "", "lock", "'l'", "tabel", "t"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("SQL template test.sql section 'seed' has no parameter [tabel] (it uses [lock, schema])");
    assertThatThrownBy(() -> template.render("seed", "schema", "", "schema", "x", "lock", "'l'"))
        .hasMessageContaining("parameter ${schema} of test.sql section 'seed' is passed twice");
    assertThatThrownBy(() -> template.render("seed", "schema"))
        .hasMessageContaining("must come in name, value pairs");
    assertThatThrownBy(() -> template.render("seeds"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("SQL template test.sql has no section 'seeds' (it has [seed, body])");
    assertThatThrownBy(() -> template.render("seed", "schema", null, "lock", "'l'"))
        .hasMessageContaining("needs parameter ${schema}, which was not set");
  }

  @Test
  void malformedTemplatesFailWithTheLine() {
    assertThatThrownBy(() -> SqlTemplate.parse("t.sql", "-- @section a\nSELECT 1\n"))
        .isInstanceOf(IllegalStateException.class).hasMessage("t.sql: section 'a' is not closed by -- @end");
    assertThatThrownBy(() -> SqlTemplate.parse("t.sql", "-- @section a\nSELECT 1\n-- @section b\n-- @end\n"))
        .hasMessage("t.sql:3: section 'a' is not closed by -- @end before: -- @section b");
    assertThatThrownBy(() -> SqlTemplate.parse("t.sql", "-- @section a\n-- @end\n-- @section a\n-- @end\n"))
        .hasMessage("t.sql:3: section 'a' is defined twice");
    assertThatThrownBy(() -> SqlTemplate.parse("t.sql", "-- @section a\n-- @end\nDROP TABLE x\n"))
        .hasMessage("t.sql:3: SQL outside a section (expected '-- @section <name>' before it): DROP TABLE x");
    assertThatThrownBy(() -> SqlTemplate.parse("t.sql", "-- @end\n")).hasMessage("t.sql:1: -- @end outside a section");
    SqlTemplate bad = SqlTemplate.parse("t.sql", "-- @section a\nSELECT ${x FROM t\n-- @end\n"
        + "-- @section b\nSELECT ${X}\n-- @end\n");
    assertThatThrownBy(() -> bad.render("a", "x", "1"))
        .hasMessage("SQL template t.sql section 'a': malformed parameter at '${x FROM t' (expected ${name}, name of "
            + "a-z 0-9 _)");
    assertThatThrownBy(() -> bad.render("b")).hasMessageContaining("malformed parameter at '${X}'");
  }

  @Test
  void aMissingResourceFailsNamingIt() {
    assertThatThrownBy(() -> SqlTemplate.load("oracle/fence.sql"))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("SQL template dev/fencing/fence/sql/oracle/fence.sql is missing from the class path (it ships in "
            + "the fencing-fence-sql jar)");
  }

  @Test
  void literalsAndIdentifiersAreQuotedByTheJavaRules() {
    assertThat(SqlFenceDdl.literal("ledger-1.eu_west")).isEqualTo("'ledger-1.eu_west'");
    assertThat(SqlFenceDdl.literal("shop.Orders")).isEqualTo("'shop.Orders'");
    assertThat(SqlFenceDdl.literal("dev.fencing.fence.sql.H2FenceTrigger"))
        .isEqualTo("'dev.fencing.fence.sql.H2FenceTrigger'");
    assertThat(SqlFenceDdl.literal("données")).as("a schema the database reports").isEqualTo("'données'");
    for (String bad : List.of("o'brien", "a\\b", "line\nbreak", "tab\t", "nul\0")) {
      assertThatThrownBy(() -> SqlFenceDdl.literal(bad)).as(bad).isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("cannot put").hasMessageContaining("expected no single quote, backslash or control character");
    }
    assertThat(SqlDialect.POSTGRESQL.quote("Orders")).isEqualTo("\"Orders\"");
    assertThat(SqlDialect.H2.quote("fencing:table:l:T")).isEqualTo("\"fencing:table:l:T\"");
    assertThat(SqlDialect.MYSQL.quote("Orders")).isEqualTo("`Orders`");
    assertThat(new TableName("shop", "Orders").sql(SqlDialect.MYSQL)).isEqualTo("`shop`.`Orders`");
    assertThat(new TableName("shop", "Orders").schemaPrefix(SqlDialect.POSTGRESQL)).isEqualTo("\"shop\".");
    assertThat(new TableName(null, "Orders").schemaPrefix(SqlDialect.H2)).isEmpty();
    assertThat(TableName.parse("Shop.Orders").folded(SqlDialect.H2).sql(SqlDialect.H2)).isEqualTo("\"SHOP\".\"ORDERS\"");
  }

  /** The SQL files spell out names and numbers the Java code also uses (fence detection, reset, uninstall). */
  @Test
  void theSqlFilesUseTheJavaConstants() {
    for (SqlDialect d : SqlDialect.values()) {
      SqlTemplate fence = SqlTemplate.load(d.cliName() + "/fence.sql");
      String all = String.join("\n", fence.sections().stream().map(n -> section(fence, n)).toList());
      assertThat(all).as(d.name()).contains("CREATE TABLE IF NOT EXISTS ${schema}" + SqlFenceDdl.FENCE_TABLE + " (")
          .contains("CREATE TABLE IF NOT EXISTS ${schema}" + SqlFenceDdl.REGISTRY_TABLE + " (")
          .contains(" " + SqlFenceDdl.GRANT_COLUMN + " ").contains(" " + SqlFenceDdl.GRANT_TOKEN_COLUMN + " ")
          .contains(SqlFenceDdl.COLUMN_MARK)
          .contains(SqlFenceDdl.TOKEN_COLUMN);
      if (d != SqlDialect.POSTGRESQL) {
        assertThat(all).contains("CREATE TABLE IF NOT EXISTS ${schema}" + SqlFenceDdl.STRIPE_TABLE + " (");
      }
    }
    String pg = section(SqlTemplate.load("postgresql/fence.sql"), "check");
    assertThat(pg).contains("pg_advisory_xact_lock(" + SqlFenceDdl.PG_ADVISORY_CLASS + ", hashtext(v_lock))")
        .contains("current_setting('" + SqlFenceDdl.PG_GRANT + "', true)")
        .contains("set_config('" + SqlFenceDdl.PG_VERIFIED + "', v_key, false)");
    SqlTemplate mysql = SqlTemplate.load("mysql/fence.sql");
    assertThat(section(mysql, "check")).contains("CREATE PROCEDURE IF NOT EXISTS ${schema}" + SqlFenceDdl.MYSQL_CHECK
        + "(").contains("CONNECTION_ID() % " + SqlFenceDdl.MYSQL_STRIPES + " FOR UPDATE")
        .contains("IF v_stripes <> " + SqlFenceDdl.MYSQL_STRIPES + " THEN");
    assertThat(section(mysql, "trigger_table")).contains("${schema}" + SqlFenceDdl.MYSQL_CHECK + "(");
    assertThat(String.join("\n", mysql.sections())).contains("reject_stale", "session_token");
    for (String p : SqlFenceDdl.MYSQL_PROCEDURES) {
      // Older check versions are only dropped: triggers of an earlier release may still call them.
      if (!p.startsWith("fencing_check_") || p.equals(SqlFenceDdl.MYSQL_CHECK)) {
        assertThat(String.join("\n", mysql.sections().stream().map(n -> section(mysql, n)).toList()))
            .contains("CREATE PROCEDURE IF NOT EXISTS ${schema}" + p + "(");
      }
    }
  }

  private static String section(SqlTemplate template, String name) {
    return template.text(name);
  }
}
