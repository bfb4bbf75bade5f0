package dev.fencing.sample.spring;

import java.util.List;
import org.springframework.data.jpa.repository.JpaRepository;

public interface OrderRepository extends JpaRepository<Order, Long> {
  List<Order> findTop50ByOrderByIdDesc();
}
