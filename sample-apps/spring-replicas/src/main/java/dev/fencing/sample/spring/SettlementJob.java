package dev.fencing.sample.spring;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;
import org.springframework.transaction.annotation.Transactional;

/**
 * The work that must run on one replica at a time: every run records itself in {@code settlement_run}. The app does
 * not know about leadership; the column {@code token_seen} is filled by the database (the fence's session variable,
 * when one is set) so a reader can see which holder wrote each row.
 */
@Component
public class SettlementJob {
  private final JdbcTemplate jdbc;
  private final String replica;
  private final long workMillis;

  public SettlementJob(JdbcTemplate jdbc, @Value("${app.replica}") String replica,
      @Value("${app.settlement.work-ms:0}") long workMillis) {
    this.jdbc = jdbc;
    this.replica = replica;
    this.workMillis = workMillis;
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
    jdbc.update("INSERT INTO settlement_run (replica, orders_seen) VALUES (?, ?)", replica, seen);
  }
}
