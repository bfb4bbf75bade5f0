package dev.fencing.sample.spring;

import dev.fencing.outbox.spring.FencingOutbox;
import java.net.URI;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.http.HttpStatus;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.ResponseStatus;
import org.springframework.web.bind.annotation.RestController;

/**
 * The outbox profile ({@code app.outbox.enabled=true}): a payment and its webhook. The webhook is a third party with no
 * fence, so it is not called here: {@link FencingOutbox} defers it to the outbox in the payment's own transaction, and
 * a relay delivers it once the transaction committed.
 */
@RestController
@ConditionalOnProperty(name = "app.outbox.enabled", havingValue = "true")
public class PaymentController {
  private static final Logger LOG = LoggerFactory.getLogger(PaymentController.class);

  private final JdbcTemplate jdbc;
  private final FencingOutbox outbox;
  private final URI webhook;
  private final String replica;

  public PaymentController(JdbcTemplate jdbc, FencingOutbox outbox, @Value("${app.outbox.webhook}") URI webhook,
      @Value("${app.replica}") String replica) {
    this.jdbc = jdbc;
    this.outbox = outbox;
    this.webhook = webhook;
    this.replica = replica;
  }

  /**
   * Records the payment of {@code order} and defers its webhook; {@code workMs} is work done after both writes,
   * before the commit (a slow payment provider, say).
   */
  @PostMapping("/payments")
  @ResponseStatus(HttpStatus.CREATED)
  @Transactional
  public String pay(@RequestParam("order") String order,
      @RequestParam(name = "workMs", defaultValue = "0") long workMs)
      throws InterruptedException {
    jdbc.update("INSERT INTO payment (order_ref, replica) VALUES (?, ?)", order, replica);
    String event = outbox.post(webhook, "application/json",
        "{\"order\":\"" + order.replace("\"", "") + "\",\"replica\":\"" + replica + "\"}");
    if (workMs > 0) {
      LOG.info("payment of {} written, working {} ms before the commit", order, workMs);
      Thread.sleep(workMs);
    }
    return event;
  }
}
