package dev.fencing.sample.spring;

import java.util.concurrent.atomic.AtomicLong;
import net.javacrumbs.shedlock.spring.annotation.SchedulerLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Profile;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;

/**
 * Profile "shedlock": a job that must run on one replica at a time, guarded the usual way, with ShedLock's
 * {@code @SchedulerLock}. A run writes {@code app.settle.steps} rows to {@code settle_row}, one statement each,
 * {@code app.settle.step-ms} apart. No fencing code.
 */
@Component
@Profile("shedlock")
public class SettleJob {
  private static final Logger LOG = LoggerFactory.getLogger(SettleJob.class);

  private final JdbcTemplate jdbc;
  private final String replica;
  private final int steps;
  private final long stepMillis;
  private final AtomicLong runs = new AtomicLong();

  public SettleJob(JdbcTemplate jdbc, @Value("${app.replica}") String replica,
      @Value("${app.settle.steps:20}") int steps, @Value("${app.settle.step-ms:200}") long stepMillis) {
    this.jdbc = jdbc;
    this.replica = replica;
    this.steps = steps;
    this.stepMillis = stepMillis;
  }

  @Scheduled(initialDelayString = "${app.settle.initial-delay-ms:500}",
      fixedDelayString = "${app.settle.interval-ms:500}")
  @SchedulerLock(name = "settle", lockAtMostFor = "${app.settle.lock-at-most-for:PT4S}")
  public void settle() throws InterruptedException {
    long run = runs.incrementAndGet();
    LOG.info("settle run {} started", run);
    for (int step = 0; step < steps; step++) {
      jdbc.update("INSERT INTO settle_row (replica, run, step) VALUES (?, ?, ?)", replica, run, step);
      Thread.sleep(stepMillis);
    }
    LOG.info("settle run {} done", run);
  }
}
