package dev.fencing.sample.spring;

import jakarta.validation.Valid;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotBlank;
import java.time.Instant;
import java.util.List;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.http.HttpStatus;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.ResponseStatus;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ResponseStatusException;

/** Reads and writes that every replica serves, leader or not. */
@RestController
public class OrderController {
  /** The body of {@code POST /orders}. */
  public record NewOrder(@NotBlank String item, @Min(1) int quantity) {}

  private final OrderRepository orders;
  private final String replica;

  public OrderController(OrderRepository orders, @Value("${app.replica}") String replica) {
    this.orders = orders;
    this.replica = replica;
  }

  @GetMapping("/orders")
  public List<Order> recent() {
    return orders.findTop50ByOrderByIdDesc();
  }

  @GetMapping("/orders/{id}")
  public Order one(@PathVariable long id) {
    return orders.findById(id).orElseThrow(() -> new ResponseStatusException(HttpStatus.NOT_FOUND, "no order " + id));
  }

  @PostMapping("/orders")
  @ResponseStatus(HttpStatus.CREATED)
  public Order create(@Valid @RequestBody NewOrder body) {
    return orders.save(new Order(body.item(), body.quantity(), replica, Instant.now()));
  }
}
