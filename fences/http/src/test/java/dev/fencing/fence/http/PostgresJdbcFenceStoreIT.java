package dev.fencing.fence.http;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** {@link JdbcFenceStore} on a real PostgreSQL 15 spawned by the test harness. */
class PostgresJdbcFenceStoreIT extends JdbcFenceStoreIT {

  private static TestDatabase db;

  @BeforeAll
  static void start() {
    db = TestDatabase.postgres();
  }

  @AfterAll
  static void stop() throws Exception {
    if (db != null) {
      db.close();
    }
  }

  @Override
  TestDatabase db() {
    return db;
  }
}
