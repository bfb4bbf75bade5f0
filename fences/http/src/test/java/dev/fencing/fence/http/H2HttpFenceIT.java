package dev.fencing.fence.http;

import dev.fencing.fence.store.FenceStore;
import dev.fencing.fence.store.JdbcFenceStore;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The whole HTTP contract through the JDK HttpServer with a {@link JdbcFenceStore} on in-memory H2. */
class H2HttpFenceIT extends HttpFenceContractTest {

  private static TestDatabase db;

  @BeforeAll
  static void startDatabase() throws Exception {
    db = TestDatabase.h2("http-fence-it");
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
    return FencedServer.jdk(fence, backend);
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
