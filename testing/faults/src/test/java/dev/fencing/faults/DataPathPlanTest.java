package dev.fencing.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.BindException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import org.junit.jupiter.api.Test;

/** The workers' Kafka ports, which the broker is told before it starts. */
class DataPathPlanTest {

  /**
   * A 80-trial run once failed at set-up: a Kafka proxy's port, picked before the broker's start and bound after it,
   * had been taken meanwhile. The plan's proxies listen from the start, so no one else can take their ports.
   */
  @Test
  void theKafkaProxiesHoldTheirPortsFromThePlanOn() throws Exception {
    try (DataPath.Plan plan = new DataPath.Plan(3)) {
      assertThat(plan.kafkaProxyPorts()).hasSize(3).doesNotHaveDuplicates();
      for (int port : plan.kafkaProxyPorts()) {
        try (ServerSocket other = new ServerSocket()) {
          other.setReuseAddress(true);
          assertThatThrownBy(() -> other.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port)))
              .as("binding the planned proxy port %d", port).isInstanceOf(BindException.class);
        }
        assertThat(plan.brokerProperties().get("advertised.listeners")).contains("://127.0.0.1:" + port);
      }
    }
  }
}
