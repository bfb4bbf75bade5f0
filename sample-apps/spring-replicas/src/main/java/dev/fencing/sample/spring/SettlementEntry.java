package dev.fencing.sample.spring;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.GeneratedValue;
import jakarta.persistence.GenerationType;
import jakarta.persistence.Id;
import jakarta.persistence.SequenceGenerator;
import jakarta.persistence.Table;

/**
 * One settlement run, stored through Spring Data JPA (app.settlement.store=jpa). Its id comes from a pooled sequence
 * (50 ids per round trip), so Hibernate sends the INSERT when the transaction flushes at its commit.
 */
@Entity
@Table(name = "settlement_entry")
public class SettlementEntry {
  @Id
  @GeneratedValue(strategy = GenerationType.SEQUENCE, generator = "settlement_entry_seq")
  @SequenceGenerator(name = "settlement_entry_seq", sequenceName = "settlement_entry_seq", allocationSize = 50)
  private Long id;

  @Column(nullable = false)
  private String replica;

  @Column(name = "orders_seen", nullable = false)
  private long ordersSeen;

  protected SettlementEntry() {}

  public SettlementEntry(String replica, long ordersSeen) {
    this.replica = replica;
    this.ordersSeen = ordersSeen;
  }

  public Long getId() {
    return id;
  }
}
