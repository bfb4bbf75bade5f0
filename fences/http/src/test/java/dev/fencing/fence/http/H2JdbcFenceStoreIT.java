package dev.fencing.fence.http;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** {@link JdbcFenceStore} on in-memory H2, with the SQL fence's Java trigger from fences/sql. */
class H2JdbcFenceStoreIT extends JdbcFenceStoreIT {

  private static TestDatabase db;

  @BeforeAll
  static void start() {
    db = TestDatabase.h2("fence-store-it");
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
