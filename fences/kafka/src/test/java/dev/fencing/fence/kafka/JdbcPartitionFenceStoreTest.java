package dev.fencing.fence.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.fence.kafka.PartitionFenceStore.Advance;
import dev.fencing.fence.sql.FenceReset;
import dev.fencing.fence.store.FenceStoreException;
import java.sql.Connection;
import java.sql.Statement;
import java.util.UUID;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The JDBC partition store on a real (in-memory) H2: table created on first use, the advances a batch needs, races. */
class JdbcPartitionFenceStoreTest {

  private JdbcDataSource ds;
  private JdbcPartitionFenceStore store;

  @BeforeEach
  void database() {
    ds = new JdbcDataSource();
    ds.setURL("jdbc:h2:mem:" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
    store = new JdbcPartitionFenceStore(ds, null);
  }

  @Test
  void readsTheAdvancesThatCoverABatch() {
    assertThat(store.advances("ledger", "t", 0, 0, 100)).isEmpty();
    for (long o : new long[] {10, 20, 30}) {
      assertThat(store.record("ledger", "t", 0, new Advance(o, o / 10 + 4, "g" + o))).isEqualTo(
          new Advance(o, o / 10 + 4, "g" + o));
    }
    store.record("ledger", "t", 1, new Advance(5, 99, null)); // other partitions, topics and locks are apart
    store.record("ledger", "u", 0, new Advance(5, 99, null));
    store.record("other", "t", 0, new Advance(5, 99, null));
    assertThat(store.advances("ledger", "t", 0, 15, 25)).extracting(Advance::offset).containsExactly(10L, 20L);
    assertThat(store.advances("ledger", "t", 0, 20, 20)).extracting(Advance::offset).containsExactly(20L);
    assertThat(store.advances("ledger", "t", 0, 35, 40)).extracting(Advance::offset).containsExactly(30L);
    // Before the oldest advance: it, and the ones up to the batch's end.
    assertThat(store.advances("ledger", "t", 0, 5, 8)).extracting(Advance::offset).containsExactly(10L);
    assertThat(store.advances("ledger", "t", 0, 5, 25)).extracting(Advance::offset).containsExactly(10L, 20L);
    assertThat(store.advances("ledger", "t", 0, 15, 25).get(0)).isEqualTo(new Advance(10, 5, "g10"));
    assertThat(store.advances("ledger", "t", 1, 0, 10)).containsExactly(new Advance(5, 99, null));
  }

  @Test
  void theSecondAdvanceAtAnOffsetGetsTheFirstOnesRow() {
    store.record("ledger", "t", 0, new Advance(7, 6, "first"));
    assertThat(store.record("ledger", "t", 0, new Advance(7, 6, "second"))).isEqualTo(new Advance(7, 6, "first"));
  }

  @Test
  void aDownDatabaseIsAFenceStoreException() {
    JdbcDataSource broken = new JdbcDataSource();
    broken.setURL("jdbc:h2:tcp://127.0.0.1:1/none");
    JdbcPartitionFenceStore down = new JdbcPartitionFenceStore(broken, null);
    assertThatThrownBy(() -> down.advances("ledger", "t", 0, 0, 1)).isInstanceOf(FenceStoreException.class)
        .hasMessageContaining("lock 'ledger' on t-0 in fencing_kafka_fence");
  }

  @Test
  void fenceResetWithLowerDeletesTheAdvancesAboveItsToken() throws Exception {
    store.record("ledger", "t", 0, new Advance(1, 7, null));
    store.record("ledger", "t", 0, new Advance(2, 999_999_999, null));
    store.record("ledger", "t", 1, new Advance(1, 7, null));
    try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
      s.execute("CREATE TABLE fencing_fence (lock_name varchar(128) PRIMARY KEY, token bigint NOT NULL, "
          + "updated_at timestamp)");
      assertThatThrownBy(() -> FenceReset.set(c, null, "ledger", 7, false)).isInstanceOf(FenceReset.Refused.class);
      assertThat(store.advances("ledger", "t", 0, 2, 2)).extracting(Advance::token).containsExactly(999_999_999L);
      FenceReset.set(c, null, "ledger", 7, true);
    }
    assertThat(store.advances("ledger", "t", 0, 0, 10)).containsExactly(new Advance(1, 7, null));
    assertThat(store.advances("ledger", "t", 1, 0, 10)).containsExactly(new Advance(1, 7, null));
  }
}
