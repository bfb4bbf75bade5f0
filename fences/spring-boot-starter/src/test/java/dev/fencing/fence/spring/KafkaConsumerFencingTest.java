package dev.fencing.fence.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.fence.kafka.FencingConsumerInterceptor;
import java.util.List;
import org.junit.jupiter.api.Test;

class KafkaConsumerFencingTest {

  @Test
  void theFenceComesFirstAndOnceBeforeTheApplicationsInterceptors() {
    assertThat(KafkaConsumerFencing.interceptors(null)).containsExactly(FencingConsumerInterceptor.class);
    assertThat(KafkaConsumerFencing.interceptors("com.example.Audit, " + FencingConsumerInterceptor.class.getName()))
        .containsExactly(FencingConsumerInterceptor.class, "com.example.Audit");
    assertThat(KafkaConsumerFencing.interceptors(List.of(String.class, FencingConsumerInterceptor.class)))
        .containsExactly(FencingConsumerInterceptor.class, String.class);
    assertThat(KafkaConsumerFencing.interceptors(Integer.class))
        .containsExactly(FencingConsumerInterceptor.class, Integer.class);
  }
}
