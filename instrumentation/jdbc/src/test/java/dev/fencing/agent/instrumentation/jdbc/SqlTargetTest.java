package dev.fencing.agent.instrumentation.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class SqlTargetTest {
  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
      "INSERT INTO cell VALUES (1)|cell",
      "insert into public.cell(a, b) values (1, 2)|public.cell",
      "INSERT IGNORE INTO cell SET a = 1|cell",
      "INSERT cell VALUES (1)|cell",
      "REPLACE INTO cell VALUES (1)|cell",
      "UPDATE cell SET n = n + 1 WHERE id = 1|cell",
      "UPDATE ONLY s.cell SET n = 1|s.cell",
      "update LOW_PRIORITY cell set n = 1|cell",
      "UPDATE cell c SET n = 1|cell",
      "UPDATE cell AS c SET n = 1 FROM other o WHERE c.id = o.id|cell",
      "UPDATE `cell` SET n = 1|\"cell\"",
      "DELETE FROM cell WHERE id = 1|cell",
      "DELETE FROM ONLY \"Odd Name\" WHERE id = 1|\"Odd Name\"",
      "DELETE FROM cell USING other WHERE cell.id = other.id|cell",
      "MERGE INTO cell USING src ON (1 = 1) WHEN MATCHED THEN DELETE|cell",
      "TRUNCATE TABLE cell|cell",
      "TRUNCATE ONLY cell|cell",
      "COPY cell FROM STDIN|cell",
      "COPY public.cell (a, b) FROM STDIN WITH (FORMAT csv)|public.cell",
      "INSERT INTO cell VALUES (1);|cell"})
  void theTargetOfAPlainWriteIsFound(String sql, String target) {
    assertThat(SqlTarget.describe(sql, SqlTarget.find(sql, true))).isEqualTo(target);
  }

  @ParameterizedTest
  @ValueSource(strings = {
      "CREATE TABLE t (a int)", "DROP TABLE cell", "ALTER TABLE cell ADD b int", "CALL proc()",
      "SELECT reserve_stock(1)", "COPY cell TO STDOUT", "COPY (SELECT 1) TO STDOUT", "WITH x AS (DELETE FROM cell RETURNING *) SELECT * FROM x",
      "SET search_path = x; UPDATE cell SET n = 1", "UPDATE cell SET n = 1; DELETE FROM log",
      "UPDATE a, b SET a.n = b.n", "DELETE a, b FROM a JOIN b", "UPDATE a JOIN b ON a.id = b.id SET b.n = 1",
      "UPDATE a INNER JOIN b USING (id) SET b.n = 1", "UPDATE a x LEFT JOIN b y ON x.id = y.id SET y.n = 1",
      "UPDATE a STRAIGHT_JOIN b ON a.id = b.id SET b.n = 1", "TRUNCATE cell, log", "INSERT INTO a.b.c VALUES (1)",
      "DO $$ BEGIN UPDATE cell SET n = 1; END $$", "", "UPDATE"})
  void anythingElseHasNoKnownTarget(String sql) {
    assertThat(SqlTarget.find(sql, true)).as(sql).isEqualTo(SqlTarget.NONE);
  }

  @Test
  void commentsQuotesAndSemicolonsInsideLiteralsDoNotHideTheTarget() {
    String quoted = "/* app */ -- note\n  INSERT INTO `db`.`cell` VALUES (1)";
    assertThat(SqlTarget.describe(quoted, SqlTarget.find(quoted, true))).isEqualTo("\"db\".\"cell\"");
    String literal = "UPDATE cell SET note = 'a;b' WHERE id = 1";
    assertThat(SqlTarget.describe(literal, SqlTarget.find(literal, true))).isEqualTo("cell");
    String dollar = "UPDATE cell SET note = $$a;b$$ WHERE id = 1"; // dollar quotes are not scanned: no target
    assertThat(SqlTarget.find(dollar, true)).isEqualTo(SqlTarget.NONE);
  }

  @Test
  void truncateHasATargetOnlyWhereTheFenceFiresOnIt() {
    assertThat(SqlTarget.find("TRUNCATE cell", false)).isEqualTo(SqlTarget.NONE);
    assertThat(SqlTarget.find("TRUNCATE cell", true)).isNotEqualTo(SqlTarget.NONE);
  }

  @Test
  void aFenceJudgesOnlyTheTablesItIsOn() {
    DatabaseFences pg = DatabaseFences.of(SessionDialect.POSTGRESQL,
        List.<String[]>of(new String[] {"public", "cell"}, new String[] {"bank", "Ledger"}));
    assertThat(judges(pg, "UPDATE cell SET n = 1", "public")).isTrue();
    assertThat(judges(pg, "UPDATE CELL SET n = 1", "public")).isTrue(); // unquoted: folded to lower case
    assertThat(judges(pg, "UPDATE \"CELL\" SET n = 1", "public")).isFalse(); // quoted: another table
    assertThat(judges(pg, "UPDATE public.cell SET n = 1", "other")).isTrue();
    assertThat(judges(pg, "UPDATE cell SET n = 1", "other")).isFalse(); // another schema's cell
    assertThat(judges(pg, "INSERT INTO log VALUES (1)", "public")).isFalse();
    assertThat(judges(pg, "INSERT INTO cell_p1 VALUES (1)", "public")).isFalse(); // a partition without the trigger
    assertThat(judges(pg, "UPDATE bank.\"Ledger\" SET n = 1", "public")).isTrue();
    assertThat(judges(pg, "UPDATE bank.Ledger SET n = 1", "public")).isFalse(); // folds to ledger
    assertThat(judges(pg, "CREATE TABLE cell2 (a int)", "public")).isFalse();

    DatabaseFences maria = DatabaseFences.of(SessionDialect.MYSQL, List.<String[]>of(new String[] {"app", "cell"}));
    assertThat(judges(maria, "UPDATE cell SET n = 1", "app")).isTrue();
    assertThat(judges(maria, "UPDATE `app`.`cell` SET n = 1", "x")).isTrue();
    assertThat(judges(maria, "UPDATE CELL SET n = 1", "app")).isFalse(); // case-sensitive table names
    assertThat(judges(maria, "TRUNCATE cell", "app")).isFalse(); // MariaDB fires no trigger on TRUNCATE

    DatabaseFences h2 = DatabaseFences.of(SessionDialect.H2, List.<String[]>of(new String[] {"PUBLIC", "CELL"}));
    assertThat(judges(h2, "update cell set n = 1", "PUBLIC")).isTrue(); // unquoted: folded to upper case
  }

  private static boolean judges(DatabaseFences f, String sql, String schema) {
    return f.judges(sql, SqlTarget.find(sql, f == null || sqlDialectFiresOnTruncate(f)), schema);
  }

  private static boolean sqlDialectFiresOnTruncate(DatabaseFences f) {
    return f.describe().startsWith("public"); // the PostgreSQL fixture
  }
}
