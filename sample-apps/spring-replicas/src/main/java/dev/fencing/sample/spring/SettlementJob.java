package dev.fencing.sample.spring;

import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * The work that must run on one replica at a time: every run records itself, in {@code settlement_run} through
 * JdbcTemplate ({@code app.settlement.store=jdbc}, the default), in {@code settlement_entry} through Spring Data JPA
 * ({@code jpa}: Hibernate sends the INSERT at the flush, when the transaction commits), or both in one transaction
 * ({@code jdbc,jpa}). The app does not know about
 * leadership; the column {@code token_seen} is filled by the database (the fence's session variable, when one is set)
 * so a reader can see which holder wrote each row.
 */
@Component
public class SettlementJob {
  private static final Logger LOG = LoggerFactory.getLogger(SettlementJob.class);

  private final JdbcTemplate jdbc;
  private final SettlementEntryRepository entries;
  private final String replica;
  private final long workMillis;
  private final boolean jdbcStore;
  private final boolean jpaStore;
  private final long commitDelayMillis;
  private final AtomicLong runs = new AtomicLong();

  public SettlementJob(JdbcTemplate jdbc, SettlementEntryRepository entries, @Value("${app.replica}") String replica,
      @Value("${app.settlement.work-ms:0}") long workMillis, @Value("${app.settlement.store:jdbc}") String store,
      @Value("${app.settlement.commit-delay-ms:0}") long commitDelayMillis) {
    java.util.List<String> stores = java.util.Arrays.asList(store.split(","));
    if (stores.isEmpty() || !java.util.List.of("jdbc", "jpa").containsAll(stores)) {
      throw new IllegalArgumentException("app.settlement.store=" + store + ": expected jdbc, jpa or jdbc,jpa");
    }
    this.jdbc = jdbc;
    this.entries = entries;
    this.replica = replica;
    this.workMillis = workMillis;
    this.jdbcStore = stores.contains("jdbc");
    this.jpaStore = stores.contains("jpa");
    this.commitDelayMillis = commitDelayMillis;
  }

  @Scheduled(initialDelayString = "${app.settlement.initial-delay-ms:500}",
      fixedDelayString = "${app.settlement.interval-ms:500}")
  @Transactional
  public void settle() throws InterruptedException {
    // A run reads, works (app.settlement.work-ms: a real settlement computes for a while), then records itself.
    Long seen = jdbc.queryForObject("SELECT count(*) FROM orders", Long.class);
    if (workMillis > 0) {
      Thread.sleep(workMillis);
    }
    if (jdbcStore) {
      jdbc.update("INSERT INTO settlement_run (replica, orders_seen) VALUES (?, ?)", replica, seen);
    }
    if (jpaStore) {
      entries.save(new SettlementEntry(replica, seen));
    }
    long run = runs.incrementAndGet();
    if (commitDelayMillis > 0) {
      // Work done before the commit, after the method returned (app.settlement.commit-delay-ms): as a real
      // transaction's before-commit callbacks and its JPA flush take their time.
      TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {
        @Override
        public void beforeCommit(boolean readOnly) {
          LOG.info("settlement run {} committing in {} ms", run, commitDelayMillis);
          try {
            Thread.sleep(commitDelayMillis);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        }
      });
    }
  }
}
