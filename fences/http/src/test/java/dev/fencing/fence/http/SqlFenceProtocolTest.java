package dev.fencing.fence.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.fence.sql.SqlDialect;
import dev.fencing.fence.sql.SqlFence;
import dev.fencing.fence.sql.SqlFenceDdl;
import dev.fencing.fence.sql.TableName;
import org.junit.jupiter.api.Test;

/**
 * {@link JdbcFenceStore} repeats what it must share with the SQL fence (table names, PostgreSQL's advisory lock key)
 * rather than depend on fences/sql at run time: this keeps the copies equal.
 */
class SqlFenceProtocolTest {

  @Test
  void tableNamesAndAdvisoryLockMatchTheSqlFence() {
    assertThat(JdbcFenceStore.FENCE_TABLE).isEqualTo(SqlFenceDdl.FENCE_TABLE);
    assertThat(JdbcFenceStore.STRIPE_TABLE).isEqualTo(SqlFenceDdl.STRIPE_TABLE);
    String postgres = new SqlFenceDdl(SqlDialect.POSTGRESQL).forPrint(
        new SqlFence(TableName.parse("orders"), "ledger", false, false));
    assertThat(postgres).contains("pg_advisory_xact_lock(" + JdbcFenceStore.PG_ADVISORY_CLASS + ", hashtext(v_lock))");
    String mysql = new SqlFenceDdl(SqlDialect.MYSQL).forPrint(
        new SqlFence(TableName.parse("orders"), "ledger", false, false));
    assertThat(mysql).contains("SELECT COUNT(*), MAX(token) INTO v_stripes, v_fence FROM "
        + SqlFenceDdl.STRIPE_TABLE);
    assertThat(mysql).contains("UPDATE " + SqlFenceDdl.STRIPE_TABLE + " SET token = v_token WHERE lock_name = p_lock");
  }
}
