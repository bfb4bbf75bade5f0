package dev.fencing.fence.spring.app;

import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.http.HttpStatus;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.ResponseStatus;
import org.springframework.web.bind.annotation.RestController;

/**
 * An ordinary Spring Boot service with no fencing code: the starter on its class path and {@code fencing.fence.*} in
 * its application.yml fence it. POST /api/orders writes a row; GET /api/orders/count reads.
 */
@SpringBootApplication
public class OrdersApplication {

  @RestController
  static class Orders {

    private final JdbcTemplate jdbc;

    Orders(JdbcTemplate jdbc) {
      this.jdbc = jdbc;
    }

    @PostMapping("/api/orders")
    @ResponseStatus(HttpStatus.CREATED)
    String create(@RequestBody String item) {
      jdbc.update("INSERT INTO orders (item) VALUES (?)", item);
      return item;
    }

    @GetMapping("/api/orders/count")
    long count() {
      return jdbc.queryForObject("SELECT count(*) FROM orders", Long.class);
    }
  }
}
