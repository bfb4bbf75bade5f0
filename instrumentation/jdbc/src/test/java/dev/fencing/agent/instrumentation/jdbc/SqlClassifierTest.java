package dev.fencing.agent.instrumentation.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.instrumentation.jdbc.SqlClassifier.Kind;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class SqlClassifierTest {
  @ParameterizedTest
  @ValueSource(strings = {
      "SELECT * FROM t", "select 1", "  \n\tSELECT x FROM t FOR UPDATE", "(SELECT 1) UNION (SELECT 2)",
      "-- comment\nSELECT 1", "/* hint */ SELECT 1", "SHOW TABLES", "EXPLAIN SELECT 1", "VALUES (1)",
      "WITH a AS (SELECT 1) SELECT * FROM a", "DESCRIBE t", "TABLE t", "SELECT updated_at, inserted FROM t"})
  void readsAreRecognised(String sql) {
    assertThat(SqlClassifier.classify(sql)).isEqualTo(Kind.READ);
  }

  @ParameterizedTest
  @ValueSource(strings = {
      "INSERT INTO t VALUES (1)", "update t set a = 1", "DELETE FROM t", "MERGE INTO t USING s ON (1=1)",
      "CREATE TABLE t (a int)", "DROP TABLE t", "ALTER TABLE t ADD b int", "TRUNCATE t", "CALL proc()",
      "{call proc()}", "REPLACE INTO t VALUES (1)", "UPSERT INTO t VALUES (1)", "COPY t FROM STDIN", "DO $$ BEGIN END $$",
      "WITH x AS (DELETE FROM t RETURNING *) SELECT * FROM x", "SELECT * INTO t2 FROM t", "EXPLAIN ANALYZE DELETE FROM t",
      "GRANT ALL ON t TO u", "", "   ", "something unknown"})
  void anythingNotRecognisedAsAReadIsAWrite(String sql) {
    assertThat(SqlClassifier.classify(sql)).isEqualTo(Kind.WRITE);
  }

  @ParameterizedTest
  @ValueSource(strings = {
      // pgjdbc's DatabaseMetaData.getSQLKeywords() (Hibernate reads it at startup): keywords in an array literal
      "select string_agg(word, ',') from pg_catalog.pg_get_keywords() where word <> ALL ('{a,abs,insert,into}'::text[])",
      "SELECT 'select into' AS x", "SELECT \"into\" FROM t", "SELECT 1 -- into t\n", "SELECT 1 /* into t */",
      "SELECT 'it''s into' FROM t", "WITH a AS (SELECT 'delete' AS w) SELECT * FROM a", "EXPLAIN SELECT 'analyze'"})
  void keywordsInsideQuotesOrCommentsDoNotMakeAReadAWrite(String sql) {
    assertThat(SqlClassifier.classify(sql)).isEqualTo(Kind.READ);
  }

  @ParameterizedTest
  @ValueSource(strings = {
      "SELECT 'x' INTO t FROM s", "SELECT 'a\\' INTO t", "SELECT 'x\\'' INTO t FROM s'", "SELECT $$into$$",
      "SELECT 'unterminated into", "WITH a AS (SELECT 'x') DELETE FROM t"})
  void aKeywordOutsideQuotesUnderEitherReadingOfBackslashesIsAWrite(String sql) {
    assertThat(SqlClassifier.classify(sql)).isEqualTo(Kind.WRITE);
  }

  @ParameterizedTest
  @ValueSource(strings = {"BEGIN", "START TRANSACTION", "COMMIT", "ROLLBACK", "SAVEPOINT a", "RELEASE SAVEPOINT a",
      "SET search_path TO x", "RESET ALL", "END", "USE db"})
  void transactionAndSessionControlIsNeitherBlockedNorTagged(String sql) {
    assertThat(SqlClassifier.classify(sql)).isEqualTo(Kind.CONTROL);
  }

  @ParameterizedTest
  @ValueSource(strings = {"SET search_path TO x; UPDATE t SET a = 1", "SELECT 1; DELETE FROM t",
      "BEGIN; INSERT INTO t VALUES (1); COMMIT"})
  void aTextOfSeveralStatementsIsAWrite(String sql) {
    assertThat(SqlClassifier.classify(sql, new String[0])).isEqualTo(Kind.WRITE);
  }

  @ParameterizedTest
  @ValueSource(strings = {"SELECT 1;", "SELECT ';' FROM t", "SELECT 1 -- a; b\n", "SET a = 1;"})
  void oneStatementWithASemicolonKeepsItsKind(String sql) {
    assertThat(SqlClassifier.classify(sql, new String[0])).isEqualTo(SqlClassifier.classify(sql));
  }

  @org.junit.jupiter.api.Test
  void aReadNamingADeclaredWriteFunctionIsAWrite() {
    String[] declared = {"reserve_stock"};
    assertThat(SqlClassifier.classify("SELECT reserve_stock(1, 2)", declared)).isEqualTo(Kind.WRITE);
    assertThat(SqlClassifier.classify("SELECT * FROM t WHERE id = reserve_stock(1)", declared)).isEqualTo(Kind.WRITE);
    assertThat(SqlClassifier.classify("SELECT reserve_stock_report FROM t", declared)).isEqualTo(Kind.READ);
    assertThat(SqlClassifier.classify("SELECT reserve_stock(1, 2)", new String[0])).isEqualTo(Kind.READ);
  }

  @org.junit.jupiter.api.Test
  void commitAndRollbackAreToldApart() {
    assertThat(SqlClassifier.isCommit("COMMIT")).isTrue();
    assertThat(SqlClassifier.isCommit("commit work")).isTrue();
    assertThat(SqlClassifier.isCommit("END")).isTrue();
    assertThat(SqlClassifier.isCommit("COMMIT PREPARED 'x'")).isFalse();
    assertThat(SqlClassifier.isCommit("BEGIN")).isFalse();
    assertThat(SqlClassifier.isRollback("ROLLBACK")).isTrue();
    assertThat(SqlClassifier.isRollback("ROLLBACK TO SAVEPOINT a")).isFalse();
  }

  @org.junit.jupiter.api.Test
  void statementsThatCannotRunInATransactionAreKnown() {
    for (String sql : new String[] {"VACUUM", "vacuum (analyze) t", "/* m */ VACUUM FULL t",
        "CREATE INDEX CONCURRENTLY i ON t (a)", "create unique index concurrently i on t (a)",
        "DROP INDEX CONCURRENTLY IF EXISTS i", "REINDEX TABLE CONCURRENTLY t", "REINDEX DATABASE app",
        "REINDEX SYSTEM app", "CREATE DATABASE tenant_7", "DROP DATABASE tenant_7", "ALTER SYSTEM SET work_mem = 1",
        "CREATE TABLESPACE fast LOCATION '/x'", "DROP SUBSCRIPTION s"}) {
      assertThat(SqlClassifier.runsOutsideTransactions(sql)).as(sql).isTrue();
    }
    for (String sql : new String[] {"CREATE INDEX i ON t (a)", "CREATE TABLE concurrently_log (a int)",
        "INSERT INTO t VALUES ('CONCURRENTLY')", "REINDEX TABLE t", "ALTER TABLE t ADD COLUMN b int",
        "UPDATE t SET a = 1", "DROP TABLE t", "CREATE UNIQUE INDEX i ON t (a)", "SELECT 1", null}) {
      assertThat(SqlClassifier.runsOutsideTransactions(sql)).as(String.valueOf(sql)).isFalse();
    }
  }

  @org.junit.jupiter.api.Test
  void statementsThatMaySwitchTheSchemaAreKnown() {
    for (String sql : new String[] {"SET search_path TO tenant_b", "set search_path = a, public",
        "SET SESSION search_path TO x", "SET LOCAL search_path TO x", "SET SCHEMA 'tenant_b'", "USE tenant_b",
        "RESET search_path", "RESET ALL", "/* tenant */ USE `b`"}) {
      assertThat(SqlClassifier.switchesSchema(sql)).as(sql).isTrue();
    }
    for (String sql : new String[] {"SET statement_timeout = 0", "SET LOCAL lock_timeout = '1s'", "RESET lock_timeout",
        "UPDATE users SET schema = 1", "SELECT 1", "SET @fencing_token = 3", null}) {
      assertThat(SqlClassifier.switchesSchema(sql)).as(String.valueOf(sql)).isFalse();
    }
  }

  @org.junit.jupiter.api.Test
  void nullSqlIsAWrite() {
    assertThat(SqlClassifier.classify(null)).isEqualTo(Kind.WRITE);
  }
}
