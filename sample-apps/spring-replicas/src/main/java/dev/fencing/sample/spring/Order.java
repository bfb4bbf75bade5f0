package dev.fencing.sample.spring;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.GeneratedValue;
import jakarta.persistence.GenerationType;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import java.time.Instant;

/** One customer order; any replica may create one. */
@Entity
@Table(name = "orders")
public class Order {
  @Id
  @GeneratedValue(strategy = GenerationType.IDENTITY)
  private Long id;

  @Column(nullable = false)
  private String item;

  @Column(nullable = false)
  private int quantity;

  /** The replica that took the order (from {@code app.replica}). */
  @Column(nullable = false)
  private String replica;

  @Column(name = "created_at", nullable = false)
  private Instant createdAt;

  protected Order() {}

  public Order(String item, int quantity, String replica, Instant createdAt) {
    this.item = item;
    this.quantity = quantity;
    this.replica = replica;
    this.createdAt = createdAt;
  }

  public Long getId() {
    return id;
  }

  public String getItem() {
    return item;
  }

  public int getQuantity() {
    return quantity;
  }

  public String getReplica() {
    return replica;
  }

  public Instant getCreatedAt() {
    return createdAt;
  }
}
