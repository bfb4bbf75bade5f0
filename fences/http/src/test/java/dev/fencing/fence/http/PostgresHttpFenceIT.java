package dev.fencing.fence.http;

import dev.fencing.fence.store.FenceStore;
import dev.fencing.fence.store.JdbcFenceStore;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The whole HTTP contract, the 64-request checker included, through Jetty with a {@link JdbcFenceStore} on a real
 * PostgreSQL 15: what several service instances sharing one database run.
 */
class PostgresHttpFenceIT extends HttpFenceContractTest {

  private static TestDatabase db;

  @BeforeAll
  static void startDatabase() throws Exception {
    db = TestDatabase.postgres();
    db.createFenceTable();
  }

  @AfterAll
  static void stopDatabase() throws Exception {
    if (db != null) {
      db.close();
    }
  }

  @Override
  FencedServer start(HttpFence fence) throws Exception {
    return FencedServer.jetty(new FenceServletFilter(fence), Map.of(), backend);
  }

  @Override
  FenceStore newStore() {
    try (var c = db.connect()) {
      TestDatabase.exec(c, "DELETE FROM fencing_fence");
    } catch (java.sql.SQLException e) {
      throw new IllegalStateException(e);
    }
    return new JdbcFenceStore(db.dataSource());
  }
}
