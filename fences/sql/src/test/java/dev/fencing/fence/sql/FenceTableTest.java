package dev.fencing.fence.sql;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.fence.store.FenceTable;
import dev.fencing.fence.store.SqlDialect;
import org.junit.jupiter.api.Test;

/**
 * {@link FenceTable} (used by the JDBC fence store and {@code fence reset}) and the SQL fence's triggers must take the
 * same locks on the same tables, or an advance through one path would not wait for transactions on the other.
 */
class FenceTableTest {

  @Test
  void theTriggersTakeTheLocksFenceTableTakes() {
    SqlFence fence = new SqlFence(TableName.parse("orders"), "ledger", false, false);
    assertThat(FenceTable.fence(null)).isEqualTo(SqlFenceDdl.FENCE_TABLE);
    assertThat(FenceTable.fence("app")).isEqualTo("app." + SqlFenceDdl.FENCE_TABLE);
    assertThat(FenceTable.stripes(null)).isEqualTo(SqlFenceDdl.STRIPE_TABLE);
    assertThat(new SqlFenceDdl(SqlDialect.POSTGRESQL).forPrint(fence))
        .contains("pg_advisory_xact_lock(" + SqlFenceDdl.PG_ADVISORY_CLASS + ", hashtext(v_lock))");
    String mysql = new SqlFenceDdl(SqlDialect.MYSQL).forPrint(fence);
    assertThat(mysql).contains("SELECT COUNT(*), MAX(token) INTO v_stripes, v_fence FROM " + SqlFenceDdl.STRIPE_TABLE);
    assertThat(mysql).contains("UPDATE " + SqlFenceDdl.STRIPE_TABLE + " SET token = v_token, "
        + SqlFenceDdl.GRANT_COLUMN + " = v_grant, " + SqlFenceDdl.GRANT_TOKEN_COLUMN + " = v_grant_token"
        + " WHERE lock_name = p_lock");
    // One grant rule: a stored grant counts only for the token it was stored with.
    assertThat(mysql).contains("IF(" + SqlFenceDdl.GRANT_TOKEN_COLUMN + " = token, " + SqlFenceDdl.GRANT_COLUMN
        + ", NULL)");
    assertThat(new SqlFenceDdl(SqlDialect.POSTGRESQL).forPrint(fence)).contains("CASE WHEN f."
        + SqlFenceDdl.GRANT_TOKEN_COLUMN + " = f.token THEN f." + SqlFenceDdl.GRANT_COLUMN + " END");
  }
}
